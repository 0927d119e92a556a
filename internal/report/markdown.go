package report

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// MarkdownOptions shape the markdown of a job summary or a PR comment.
type MarkdownOptions struct {
	// Title is rendered as a level-2 heading; none when empty.
	Title string
	// Marker is a hidden HTML comment placed first, e.g.
	// "<!-- kustomize-deploy:unit=web -->", by which the sticky PR comment
	// is found again. Text that is not yet an HTML comment is wrapped in one
	// (the body still contains it).
	Marker string
	// PageMarker, for MarkdownPages, is the marker of page n (2, 3, …);
	// page 1 has Marker. Nil: Marker with " page=n" inside it.
	PageMarker func(n int) string
	// RunURL, when set, is linked as "full diff in the job summary".
	RunURL string
	// MaxBytes caps the body's size in bytes (UTF-8); 0 means unlimited.
	// GitHub rejects comments over 65,536 characters.
	MaxBytes int
	// MaxPages caps how many bodies MarkdownPages makes: diffs are left
	// out first (risky ones last), then the last page is cut; 0 means 1.
	MaxPages int
	// Compact is for a PR comment: changes that touch only noise
	// (result.Entry.Noise: chart labels, app versions, checksums) fold
	// into one line per release instead of a diff each, and a group of
	// risky changes alike names a few of its objects, not all. The job
	// summary keeps every diff and name.
	Compact bool
	// Reach, of a diff against a base revision, says which units the
	// change reached: one line names how many were rendered and the
	// others, not affected.
	Reach *result.Reach
}

// Markdown renders results as GitHub-flavoured markdown: a summary table,
// then the risky changes (see Risk) with their diffs, then per unit the
// failure message, one collapsible diff per other changed object and the
// skipped and failed objects with their reasons. Unchanged objects are
// counted, not listed. Over opts.MaxBytes, diffs are left out, the
// others' largest first, and listed in one folded list; as a last resort
// the body is cut.
func Markdown(results []*result.Result, opts MarkdownOptions) string {
	return fit(markdownBlocks(results, opts), opts)
}

// block is one piece of the document. A fenced block keeps its fence when
// cut (head and tail); a diff block can be left out.
type block struct {
	head, body, tail string
	// note replaces a risky diff left out, in place: the item stays. A
	// diff that is not risky is listed in the folded list instead, as
	// omitted.
	note    string
	omitted string
	// group and name, of a diff that may be omitted, are its action, kind
	// and namespace, and its object's name: diffs omitted alike make one
	// line of the folded list. size is the diff's in characters.
	group, name string
	size        int
	risky       bool
}

func (b block) text() string { return b.head + b.body + b.tail }

// droppable reports whether the block is a diff that may be left out.
func (b block) droppable() bool { return b.note != "" || b.omitted != "" }

func markdownBlocks(results []*result.Result, opts MarkdownOptions) []block {
	var bs []block
	add := func(format string, args ...any) { bs = append(bs, block{head: fmt.Sprintf(format, args...)}) }

	if m := marker(opts.Marker); m != "" {
		add("%s\n", m)
	}
	if opts.Title != "" {
		add("## %s\n\n", escapeInline(opts.Title))
	}
	if len(results) == 0 {
		add("No units ran.\n\n")
		return bs
	}

	add("| unit | result | created | configured | deleted | unchanged | skipped | failed | validation |\n")
	add("|---|---|--:|--:|--:|--:|--:|--:|---|\n")
	for _, r := range results {
		c := r.Counts
		add("| %s | %s | %d | %d | %d | %d | %d | %d | %s |\n",
			cell(r.Unit), verdict(r), c.Created, c.Configured, c.Deleted, c.Unchanged, c.Skipped, c.Failed, validation(r))
	}
	add("\n")
	if line := reachLine(opts.Reach); line != "" {
		add("%s\n\n", line)
	}
	if noChanges(results) {
		add("%s\n\n", noChangesSentence(results))
	} else if opts.RunURL != "" {
		add("%s.\n\n", link("Full diff in the job summary", opts.RunURL))
	}
	bs = append(bs, imageBlocks(results, len(results) > 1)...)
	if s := riskSentence(results); s != "" {
		add("%s\n\n", s)
		add("### ⚠️ Risky changes\n\n")
		inList := false
		for _, r := range results {
			bs = append(bs, riskyBlocks(r, len(results) > 1, opts, &inList)...)
		}
		if inList {
			add("\n")
		}
	}
	bs = append(bs, revertBlocks(results)...)

	for _, r := range results {
		bs = append(bs, unitBlocks(r, opts)...)
	}
	return bs
}

// riskyBlocks are r's risky changes: first the lines of those without a
// diff shown (a prune, a failure), alike ones grouped (see riskyLines),
// then each diff kept open, its line kept when the diff is left out.
// Lines make one tight list across units (a blank line anywhere in it
// would space every item out); inList says one is open, and a blank line
// ends it before a diff.
func riskyBlocks(r *result.Result, withUnit bool, opts MarkdownOptions, inList *bool) []block {
	var bs []block
	endList := func() string {
		if *inList {
			*inList = false
			return "\n"
		}
		return ""
	}
	if l := suspensionLine("this PR", r); l != "" {
		bs = append(bs, block{head: "- ⚠️ **suspend** " + escapeInline(l) + "\n", risky: true})
		*inList = true
	}
	suffix := func(e result.Entry) string {
		s := ""
		if withUnit {
			s += " · unit " + escapeInline(r.Unit)
		}
		if threeWay(r) && e.Change == "" {
			s += " · not from this PR"
		}
		return s
	}
	var lines, withDiff []result.Entry
	for _, e := range byStage(r.Entries) {
		switch {
		case Risk(e) == "":
		case e.Diff == "":
			lines = append(lines, e)
		default:
			withDiff = append(withDiff, e)
		}
	}
	for _, l := range riskyLines(lines, suffix, opts.Compact) {
		bs = append(bs, block{head: l, risky: true})
		*inList = true
	}
	for _, e := range withDiff {
		risk := Risk(e)
		line := "- ⚠️ **" + escapeInline(risk) + "** " + escapeInline(string(e.Action)) + " " + codeSpan(e.Object.String())
		if e.Source != "" {
			line += " (" + escapeInline(e.Source) + ")"
		}
		line += suffix(e)
		if d := dangers(e); d != "" {
			line += ": " + d
		}
		summary := "⚠️ <b>" + htmlLine(risk) + "</b> " + entrySummary(e)
		if d := dangersHTML(e); d != "" {
			summary += ": " + d
		}
		if withUnit {
			summary += " · unit " + htmlLine(r.Unit)
		}
		if threeWay(r) && e.Change == "" {
			summary += " · not from this PR"
		}
		b := diffBlock(summary, e.Diff, true)
		b.head = endList() + b.head
		b.note = fmt.Sprintf("%s: diff (%s characters) in %s\n\n", line, thousands(utf8.RuneCountInString(e.Diff)), jobSummary(opts.RunURL))
		b.risky = true
		bs = append(bs, b)
	}
	return bs
}

// riskyLines are the risky entries without a diff as list items, one per
// entry, except that entries alike — the same risk, action, kind,
// namespace, reason and dangers — make one item naming them all: "41 ×
// `ConfigMap` deleted in `shop`: `a`, `b`, `c` and 38 more", so that a
// thousand prunes read in one line. suffix ends an entry's item; compact
// names a few of a group's objects, else all.
func riskyLines(entries []result.Entry, suffix func(result.Entry) string, compact bool) []string {
	type group struct {
		first   result.Entry
		names   []string
		sources int
	}
	var groups []*group
	at := map[string]*group{}
	for _, e := range entries {
		k := strings.Join([]string{Risk(e), string(e.Action), e.Object.Group, e.Object.Kind, e.Object.Namespace, e.Reason, dangers(e), suffix(e)}, "\x00")
		g, ok := at[k]
		if !ok {
			g = &group{first: e}
			at[k] = g
			groups = append(groups, g)
		}
		g.names = append(g.names, codeSpan(e.Object.Name))
	}
	var out []string
	for _, g := range groups {
		e := g.first
		line := "- ⚠️ **" + escapeInline(Risk(e)) + "** "
		if len(g.names) == 1 {
			line += escapeInline(string(e.Action)) + " " + codeSpan(e.Object.String())
			if e.Source != "" {
				line += " (" + escapeInline(e.Source) + ")"
			}
		} else {
			line += fmt.Sprintf("%s × %s %s", thousands(len(g.names)), codeSpan(e.Object.Kind), escapeInline(string(e.Action)))
			if e.Object.Namespace != "" {
				line += " in " + codeSpan(e.Object.Namespace)
			}
		}
		line += suffix(e)
		var why []string
		if e.Reason != "" {
			why = append(why, escapeInline(e.Reason))
		}
		if d := dangers(e); d != "" {
			why = append(why, d)
		}
		if len(why) > 0 {
			line += ": " + strings.Join(why, "; ")
		}
		switch {
		case len(g.names) > 1 && compact:
			line += " — " + object.Few(g.names)
		case len(g.names) > 1:
			line += " — " + strings.Join(g.names, ", ")
		}
		out = append(out, line+"\n")
	}
	return out
}

// compactDiffs is how many diffs a unit shows in a compact comment; over
// it, its changes are one line per action, kind and namespace, and their
// diffs are in the job summary: a thousand-object change reads in one
// screen.
const compactDiffs = 50

// groupedLines are entries as one line per action, kind and namespace,
// a few objects named: "- 900 × configured `Deployment` in `shop`:
// `web-000`, `web-001`, `web-002` and 897 more".
func groupedLines(entries []result.Entry) []string {
	var order []string
	names := map[string][]string{}
	for _, e := range entries {
		k := escapeInline(string(e.Action)) + " " + codeSpan(e.Object.Kind)
		if e.Object.Namespace != "" {
			k += " in " + codeSpan(e.Object.Namespace)
		}
		if _, ok := names[k]; !ok {
			order = append(order, k)
		}
		names[k] = append(names[k], codeSpan(e.Object.Name))
	}
	out := make([]string, len(order))
	for i, k := range order {
		out[i] = fmt.Sprintf("- %s × %s: %s", thousands(len(names[k])), k, object.Few(names[k]))
	}
	return out
}

// imageBlocks list the images results change, first in the comment: "-
// container `web`: `web:1.0` → `web:1.1` in `Deployment/shop/web` ·
// release HelmRelease/shop/web"; none when no image changes.
func imageBlocks(results []*result.Result, withUnit bool) []block {
	var lines []string
	for _, r := range results {
		for _, im := range r.Images {
			from, to := codeSpan(im.From), codeSpan(im.To)
			if im.From == "" {
				from = "(new)"
			}
			if im.To == "" {
				to = "(removed)"
			}
			names := make([]string, len(im.Objects))
			for i, id := range im.Objects {
				names[i] = codeSpan(id.String())
			}
			line := "- container " + codeSpan(im.Container) + ": " + from + " → " + to + " in " + object.Few(names)
			if im.Release != "" {
				line += " · release " + escapeInline(im.Release)
			}
			if withUnit {
				line += " · unit " + escapeInline(r.Unit)
			}
			lines = append(lines, line+"\n")
		}
	}
	if len(lines) == 0 {
		return nil
	}
	bs := []block{{head: "### 🖼️ Images\n\n"}}
	for _, l := range lines {
		bs = append(bs, block{head: l})
	}
	return append(bs, block{head: "\n"})
}

// foldedLines are r's noise-only changes, one line per release (and one
// for the unit's own objects): "HelmRelease/shop/web, chart web 1.0.0 →
// 1.1.0: 14 objects relabelled: `A`, `B`, `C` and 11 more".
func foldedLines(r *result.Result, entries []result.Entry) []string {
	var order []string
	by := map[string][]string{}
	for _, e := range underReleases(r, entries) {
		if _, ok := by[e.Release]; !ok {
			order = append(order, e.Release)
		}
		by[e.Release] = append(by[e.Release], codeSpan(e.Object.String()))
	}
	var out []string
	for _, name := range order {
		what := "the unit's own objects"
		if name != "" {
			what = escapeInline(name)
			for _, rel := range r.Releases {
				if rel.HelmRelease == name {
					what += ", chart " + escapeInline(rel.Chart) + " "
					if rel.FromVersion != "" {
						what += escapeInline(rel.FromVersion) + " → "
					}
					what += escapeInline(rel.Version)
				}
			}
		}
		names := by[name]
		noun := "objects"
		if len(names) == 1 {
			noun = "object"
		}
		out = append(out, fmt.Sprintf("- %s: %d %s relabelled: %s", what, len(names), noun, object.Few(names)))
	}
	return out
}

// entrySummary is e's action, object, file and reason (a note such as
// "not validated: ...") as one line of HTML: a line break in a <summary>
// would end the HTML block, and the rest of it would render as markdown.
func entrySummary(e result.Entry) string {
	s := htmlLine(string(e.Action)) + " <code>" + htmlLine(e.Object.String()) + "</code>"
	if e.Release != "" {
		s += " of " + htmlLine(e.Release)
	}
	if e.Source != "" {
		s += " (" + htmlLine(e.Source) + ")"
	}
	if e.Reason != "" {
		s += ": " + htmlLine(e.Reason)
	}
	return s
}

// diffBlock is diff folded under summary (one line of HTML), or shown
// unfolded when open.
func diffBlock(summary, diff string, open bool) block {
	details := "<details>"
	if open {
		details = "<details open>"
	}
	d := fenced("diff", diff)
	return block{head: details + "<summary>" + summary + "</summary>\n\n" + d.head, body: d.body, tail: d.tail + "</details>\n\n"}
}

func unitBlocks(r *result.Result, opts MarkdownOptions) []block {
	var diffs, changes, skipped, failed, folded []result.Entry
	for _, e := range byStage(r.Entries) {
		switch {
		case Risk(e) != "": // shown first, with the risky changes
		case opts.Compact && e.Noise && e.Action == result.Configured && !e.Pending && !e.Gone && len(e.Drift) == 0:
			// Folded only when the PR's noise is all the apply does: drift
			// or changes pending since the last apply keep their diff.
			folded = append(folded, e)
		case e.Action == result.Skipped:
			skipped = append(skipped, e)
		case e.Action == result.Failed:
			failed = append(failed, e)
		case e.Diff != "" || e.Change != "":
			diffs = append(diffs, e)
		case e.Action != result.Unchanged:
			changes = append(changes, e)
		}
	}
	if r.Ready && len(diffs)+len(changes)+len(skipped)+len(failed)+len(folded)+len(r.Notes) == 0 {
		return nil
	}

	var bs []block
	add := func(format string, args ...any) { bs = append(bs, block{head: fmt.Sprintf(format, args...)}) }
	add("### %s\n\n", escapeInline(r.Unit))
	var facts []string
	if r.Mode != "" {
		facts = append(facts, escapeInline(string(r.Mode)))
	}
	if r.Revision != "" {
		facts = append(facts, "revision "+codeSpan(r.Revision))
	}
	if r.RollbackOf > 0 {
		facts = append(facts, fmt.Sprintf("a rollback to revision %d of the unit's history", r.RollbackOf))
	}
	if r.Duration != "" {
		facts = append(facts, escapeInline(r.Duration))
	}
	if r.Namespace != "" {
		facts = append(facts, "objects without a namespace in "+codeSpan(r.Namespace))
	}
	status := resultMark(r) + " " + escapeInline(string(r.Reason))
	if len(facts) > 0 {
		status += " · " + strings.Join(facts, " · ")
	}
	add("%s\n\n", status)
	for _, l := range releaseLines(r) {
		add("%s\n\n", escapeInline(l))
	}
	if !r.Ready && r.Message != "" {
		bs = append(bs, fenced("", r.Message))
	}
	bs = append(bs, logBlocks(r)...)
	for _, rem := range r.Remediations {
		add("**Remediated:** %s\n\n", escapeInline(rem.String()))
	}
	bs = append(bs, notes(r)...)

	switch {
	case opts.Compact && len(diffs) > compactDiffs:
		add("**%s changes**, diffs in %s:\n\n", thousands(len(diffs)), jobSummary(opts.RunURL))
		for _, l := range groupedLines(diffs) {
			add("%s\n", l)
		}
		add("\n")
	case threeWay(r):
		bs = append(bs, threeWayDiffs(r, diffs)...)
	default:
		bs = append(bs, diffBlocks(diffs, func(e result.Entry) string { return e.Diff })...)
	}
	list := func(title string, entries []result.Entry, withAction bool) {
		if len(entries) == 0 {
			return
		}
		add("**%s**\n\n", title)
		release := ""
		for _, e := range underReleases(r, entries) {
			item := "- "
			if e.Release != "" {
				item = "  - "
				if e.Release != release {
					add("- %s\n", escapeInline(releaseTitle(r, e.Release)))
				}
			}
			release = e.Release
			line := item + codeSpan(e.Object.String())
			if withAction {
				line = item + escapeInline(string(e.Action)) + " " + codeSpan(e.Object.String())
			}
			if e.Source != "" {
				line += " (" + escapeInline(e.Source) + ")"
			}
			if e.Reason != "" {
				line += ": " + escapeInline(e.Reason)
			}
			add("%s\n", line)
		}
		add("\n")
	}
	if len(folded) > 0 {
		add("**Folded** (only chart labels, app versions, checksums or the paths given to fold changed; diffs in %s)\n\n", jobSummary(opts.RunURL))
		for _, l := range foldedLines(r, folded) {
			add("%s\n", l)
		}
		add("\n")
	}
	list("Changed", changes, true)
	list("Skipped", skipped, false)
	if len(failed) > 0 {
		add("**Failed**\n\n")
		for _, line := range failedLines(failed) {
			add("%s\n", line)
		}
		add("\n")
	}
	return bs
}

// failedLines are the failed entries as list items, one per cause: "-
// `A` (a.yaml): cause" for one object, else the cause and a few of its
// objects, so that one missing namespace of fifty objects is one item.
func failedLines(failed []result.Entry) []string {
	failures := make([]object.Failure, len(failed))
	for i, e := range failed {
		failures[i] = object.Failure{Located: object.Located{ID: e.Object, Source: e.Source}, Cause: e.Reason}
	}
	var out []string
	for _, g := range object.ByCause(failures) {
		if len(g.Objects) == 1 {
			out = append(out, "- "+locatedSpan(g.Objects[0])+causeSuffix(": ", g.Cause))
			continue
		}
		names := make([]string, len(g.Objects))
		for i, o := range g.Objects {
			names[i] = locatedSpan(o)
		}
		out = append(out, "- "+escapeInline(g.Cause)+" — "+object.Counted(names))
	}
	return out
}

// locatedSpan is an object as a code span, and its file.
func locatedSpan(l object.Located) string {
	s := codeSpan(l.ID.String())
	if l.Source != "" {
		s += " (" + escapeInline(l.Source) + ")"
	}
	return s
}

func causeSuffix(sep, cause string) string {
	if cause == "" {
		return ""
	}
	return sep + escapeInline(cause)
}

// byStage orders entries by stage, keeping their order within one.
func byStage(entries []result.Entry) []result.Entry {
	out := append([]result.Entry(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Stage.Order() < out[j].Stage.Order() })
	return out
}

func mark(ok bool) string {
	if ok {
		return "✅"
	}
	return "❌"
}

func verdict(r *result.Result) string { return resultMark(r) + " " + cell(string(r.Reason)) }

// resultMark is ✅ or ❌, or ⏸️ for a unit skipped on purpose (suspended,
// pinned, an older revision), which is not a failure.
func resultMark(r *result.Result) string {
	if !r.Ready && r.Reason.SkipsByDesign() {
		return "⏸️"
	}
	return mark(r.Ready)
}

// validation renders the validation that ran, as the result records it:
// nothing when the run ended before validating or had nothing to validate.
func validation(r *result.Result) string {
	what := map[result.Validation]string{
		result.ValidationServer: "server dry-run",
		result.ValidationClient: "offline schema",
	}[r.Validation]
	switch {
	case r.Validation == "":
		return "—"
	case r.Validation == result.ValidationNone:
		return "off"
	case r.Reason == result.ReasonValidationFailed:
		return "❌ " + what
	default:
		return "✅ " + what
	}
}

func noChanges(results []*result.Result) bool {
	for _, r := range results {
		if !r.Ready || r.Changed() {
			return false
		}
	}
	return true
}

func noChangesSentence(results []*result.Result) string {
	revs := map[string]bool{}
	for _, r := range results {
		revs[r.Revision] = true
	}
	if len(revs) == 1 && !revs[""] {
		return "**No changes:** the cluster matches revision " + codeSpan(results[0].Revision) + "."
	}
	return "**No changes:** the cluster matches the desired state of every unit."
}

func marker(m string) string {
	m = strings.TrimSpace(m)
	if m == "" || strings.HasPrefix(m, "<!--") && strings.HasSuffix(m, "-->") {
		return m
	}
	return "<!-- " + m + " -->" // still contains m, so the comment is found by m
}

func jobSummary(runURL string) string {
	if runURL == "" {
		return "the job summary"
	}
	return link("the job summary", runURL)
}

// thousands formats a non-negative count as 12,345.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
