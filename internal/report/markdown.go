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
	risky   bool
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
	if noChanges(results) {
		add("%s\n\n", noChangesSentence(results))
	} else if opts.RunURL != "" {
		add("%s.\n\n", link("Full diff in the job summary", opts.RunURL))
	}
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

// riskyBlocks are r's risky changes: each a diff kept open, or a line
// when there is no diff (a prune, a failure) or the diff is left out.
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
	for _, e := range byStage(r.Entries) {
		risk := Risk(e)
		if risk == "" {
			continue
		}
		line := "- ⚠️ **" + escapeInline(risk) + "** " + escapeInline(string(e.Action)) + " " + codeSpan(e.Object.String())
		if e.Source != "" {
			line += " (" + escapeInline(e.Source) + ")"
		}
		if withUnit {
			line += " · unit " + escapeInline(r.Unit)
		}
		if threeWay(r) && e.Change == "" {
			line += " · not from this PR"
		}
		if e.Diff == "" {
			if e.Reason != "" {
				line += ": " + escapeInline(e.Reason)
			}
			bs = append(bs, block{head: line + "\n", risky: true})
			*inList = true
			continue
		}
		summary := "⚠️ <b>" + htmlLine(risk) + "</b> " + entrySummary(e)
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
	var diffs, changes, skipped, failed []result.Entry
	for _, e := range byStage(r.Entries) {
		switch {
		case Risk(e) != "": // shown first, with the risky changes
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
	if r.Ready && len(diffs)+len(changes)+len(skipped)+len(failed)+len(r.Notes) == 0 {
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

	if threeWay(r) {
		bs = append(bs, threeWayDiffs(r, diffs)...)
	} else {
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
