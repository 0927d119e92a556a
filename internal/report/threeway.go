package report

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A three-way diff (result.Result.Base set) splits what merging a pull
// request does into what the PR itself changes (entries' Change) and what
// was changed in the cluster since the last apply (entries' Drift and
// Gone): merging reverts the latter where the PR leaves it alone.

// threeWay reports whether r is a three-way diff.
func threeWay(r *result.Result) bool { return r.Base != "" }

// maxValue caps a value shown inline: the full value is in the JSON
// result.
const maxValue = 80

// shortValue is v for one line of text: absent shown as such, newlines
// shown as ⏎, cut at maxValue characters.
func shortValue(v string) string {
	if v == "" {
		return "(absent)"
	}
	v = strings.ReplaceAll(v, "\n", "⏎")
	if utf8.RuneCountInString(v) > maxValue {
		v = string([]rune(v)[:maxValue-1]) + "…"
	}
	return v
}

// driftItem is one field (or, gone, a whole object) changed in the
// cluster since the last apply.
type driftItem struct {
	object string
	result.FieldDrift
	gone bool
}

// driftItems are r's changes in the cluster: what merging reverts first
// (deleted objects last among them), then the fields the PR changes too.
func driftItems(r *result.Result) (reverted, alsoChanged []driftItem) {
	var gone []driftItem
	for _, e := range byStage(r.Entries) {
		for _, d := range e.Drift {
			it := driftItem{object: e.Object.String(), FieldDrift: d}
			if d.Reverted {
				reverted = append(reverted, it)
			} else {
				alsoChanged = append(alsoChanged, it)
			}
		}
		if e.Gone {
			gone = append(gone, driftItem{object: e.Object.String(), gone: true})
		}
	}
	return append(reverted, gone...), alsoChanged
}

// revertBlocks is the section, across units, of the live changes merging
// reverts: one line each, never left out.
func revertBlocks(results []*result.Result) []block {
	var bs []block
	add := func(format string, args ...any) { bs = append(bs, block{head: fmt.Sprintf(format, args...)}) }
	for _, r := range results {
		reverted, also := driftItems(r)
		if len(reverted)+len(also) == 0 {
			continue
		}
		if len(bs) == 0 {
			add("### ↩️ Merging reverts live changes\n\n")
		}
		who := "The cluster"
		if len(results) > 1 {
			who = "**" + escapeInline(r.Unit) + "**: the cluster"
		}
		add("%s was changed since %s, the revision last applied; merging puts these back:\n\n", who, codeSpan(short(r.AppliedRevision)))
		for _, it := range reverted {
			if it.gone {
				add("- ↩️ %s was deleted in the cluster: merging creates it again\n", codeSpan(it.object))
				continue
			}
			add("- ↩️ %s %s: live %s, Git %s\n", codeSpan(it.object), codeSpan(it.Field), codeSpan(shortValue(it.Live)), codeSpan(shortValue(it.Applied)))
		}
		if len(also) > 0 {
			if len(reverted) > 0 {
				add("\n")
			}
			add("Changed in the cluster and by this PR, whose value wins:\n\n")
			for _, it := range also {
				add("- %s %s: live %s, base %s, this PR %s\n", codeSpan(it.object), codeSpan(it.Field),
					codeSpan(shortValue(it.Live)), codeSpan(shortValue(it.Applied)), codeSpan(shortValue(it.Merged)))
			}
		}
		add("\n")
	}
	return bs
}

// threeWayDiffs are the diff blocks of a three-way result's unit: the
// PR's own changes, then what else merging applies (Git changes since the
// revision last applied). Drift is listed in its own section, and risky
// entries with the risky changes.
func threeWayDiffs(r *result.Result, entries []result.Entry) []block {
	var mine, others []result.Entry
	for _, e := range entries {
		if e.Change != "" {
			mine = append(mine, e)
		}
		if alsoApplied(e) {
			others = append(others, e)
		}
	}
	var bs []block
	add := func(format string, args ...any) { bs = append(bs, block{head: fmt.Sprintf(format, args...)}) }
	if len(mine) > 0 {
		add("**What this PR changes** (%s → %s):\n\n", codeSpan(short(r.Base)), codeSpan(short(r.Revision)))
		bs = append(bs, diffBlocks(mine, func(e result.Entry) string { return e.Change })...)
	}
	switch {
	case len(others) == 0:
	case r.AppliedRevision == "":
		add("**Also applied on merge**, not in this PR (the unit was never applied):\n\n")
	default:
		add("**Also applied on merge**, not in this PR: the desired state changed since %s, the revision last applied (later commits, or values the unit substitutes):\n\n", codeSpan(short(r.AppliedRevision)))
	}
	bs = append(bs, diffBlocks(others, func(e result.Entry) string { return e.Diff })...)
	return bs
}

// alsoApplied reports whether e's live diff holds changes that neither
// the PR's change nor the drift section shows.
func alsoApplied(e result.Entry) bool {
	return e.Diff != "" && (e.Pending || e.Change == "" && len(e.Drift) == 0 && !e.Gone)
}

// diffBlocks are the entries' diffs (which diff says), each folded, and
// listed as omitted when left out.
func diffBlocks(entries []result.Entry, diff func(result.Entry) string) []block {
	bs := make([]block, len(entries))
	for i, e := range entries {
		d := diff(e)
		bs[i] = diffBlock(entrySummary(e), d, false)
		bs[i].omitted = fmt.Sprintf("- %s %s (%s characters)\n", escapeInline(string(e.Action)), codeSpan(e.Object.String()), thousands(utf8.RuneCountInString(d)))
		bs[i].group = escapeInline(string(e.Action)) + " " + codeSpan(e.Object.Kind)
		if e.Object.Namespace != "" {
			bs[i].group += " in " + codeSpan(e.Object.Namespace)
		}
		bs[i].name, bs[i].size = codeSpan(e.Object.Name), utf8.RuneCountInString(d)
	}
	return bs
}

// notes are r's notes as a quoted block; none when it has none.
func notes(r *result.Result) []block {
	var bs []block
	for _, n := range r.Notes {
		bs = append(bs, block{head: "> **Note:** " + escapeInline(n) + "\n\n"})
	}
	return bs
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
