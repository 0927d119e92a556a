// Package report renders a result.Result for people: the CLI's text output
// here; the PR comment and job summary (markdown) render the same value.
package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Text writes the kapp-style change list: every object with its action,
// grouped by stage, then diffs (when showDiffs), then a one-line summary.
func Text(w io.Writer, r *result.Result, showDiffs bool) {
	byStage := map[result.Stage][]result.Entry{}
	for _, e := range r.Entries {
		byStage[e.Stage] = append(byStage[e.Stage], e)
	}
	width := 0
	for _, e := range r.Entries {
		width = max(width, len(e.Object.String()))
	}
	// A cause many objects failed for is said once, at the first of them.
	failedFirst := map[string]object.ID{}
	for _, s := range append(result.Stages, result.StagePrune, result.StageHooks) {
		entries := byStage[s]
		if len(entries) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s:\n", s)
		release := ""
		for _, e := range underReleases(r, entries) {
			indent := "  "
			if e.Release != "" {
				indent = "    "
				if e.Release != release {
					fmt.Fprintf(w, "  %s:\n", releaseTitle(r, e.Release))
				}
			}
			release = e.Release
			line := fmt.Sprintf("%s%-10s  %-*s", indent, e.Action, width, e.Object)
			if e.Source != "" {
				line += "  " + e.Source
			}
			reason := e.Reason
			if first, ok := failedFirst[reason]; ok && e.Action == result.Failed && reason != "" {
				reason = "same cause as " + first.String()
			} else if e.Action == result.Failed {
				failedFirst[reason] = e.Object
			}
			if reason != "" {
				line += "  (" + reason + ")"
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	switch {
	case showDiffs && threeWay(r):
		textThreeWay(w, r)
	case showDiffs:
		for _, e := range r.Entries {
			writeDiff(w, e.Diff)
		}
		if len(r.Entries) > 0 {
			fmt.Fprintln(w)
		}
	}
	for _, l := range releaseLines(r) {
		fmt.Fprintln(w, l)
	}
	for _, im := range r.Images {
		names := make([]string, len(im.Objects))
		for i, id := range im.Objects {
			names[i] = id.String()
		}
		fmt.Fprintf(w, "image %s: %s → %s in %s\n", im.Container, cmp.Or(im.From, "(new)"), cmp.Or(im.To, "(removed)"), object.Few(names))
	}
	for _, e := range r.Entries {
		for _, d := range e.Dangers {
			fmt.Fprintf(w, "warning: %s %s %s: %s\n", e.Action, e.Object, d.Field, d.Consequence)
		}
	}
	if l := suspensionLine("this change", r); l != "" {
		fmt.Fprintln(w, "warning: "+l)
	}
	if r.RollbackOf > 0 {
		fmt.Fprintf(w, "a rollback: revision %d of the unit's history applied again\n", r.RollbackOf)
	}
	for _, rem := range r.Remediations {
		fmt.Fprintln(w, "remediated: "+rem.String())
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	if r.Namespace != "" {
		fmt.Fprintf(w, "objects without a namespace went to namespace %s\n", r.Namespace)
	}
	fmt.Fprintln(w, Summary(r))
	textLogs(w, r)
}

// Summary is the one-line outcome: unit, verdict, counts, duration.
func Summary(r *result.Result) string {
	c := r.Counts
	verdict := "succeeded"
	if !r.Ready {
		verdict = "failed (" + string(r.Reason) + ")"
	}
	s := fmt.Sprintf("%s %s %s: %d created, %d configured, %d unchanged, %d deleted, %d skipped",
		r.Unit, r.Mode, verdict, c.Created, c.Configured, c.Unchanged, c.Deleted, c.Skipped)
	if c.Failed > 0 {
		s += fmt.Sprintf(", %d failed", c.Failed)
	}
	if r.Duration != "" {
		s += " in " + r.Duration
	}
	if !r.Ready && r.Message != "" {
		s += "\n" + r.Message
	}
	return s
}

// textThreeWay writes a three-way diff's parts: the changes against the
// base, the live changes applying reverts, and the rest of the diffs.
func textThreeWay(w io.Writer, r *result.Result) {
	var others []string
	fmt.Fprintf(w, "\nchanges against %s:\n", short(r.Base))
	for _, e := range r.Entries {
		writeDiff(w, e.Change)
		if alsoApplied(e) {
			others = append(others, e.Diff)
		}
	}
	reverted, also := driftItems(r)
	if len(reverted)+len(also) > 0 {
		fmt.Fprintf(w, "\nchanged in the cluster since %s, the revision last applied:\n", short(r.AppliedRevision))
	}
	for _, it := range reverted {
		if it.gone {
			fmt.Fprintf(w, "  reverts  %s: deleted in the cluster, created again\n", it.object)
			continue
		}
		fmt.Fprintf(w, "  reverts  %s %s: live %s, Git %s\n", it.object, it.Field, shortValue(it.Live), shortValue(it.Applied))
	}
	for _, it := range also {
		fmt.Fprintf(w, "  changes  %s %s: live %s, base %s, now %s\n", it.object, it.Field, shortValue(it.Live), shortValue(it.Applied), shortValue(it.Merged))
	}
	switch {
	case len(others) == 0:
	case r.AppliedRevision == "":
		fmt.Fprintf(w, "\nalso applied (the unit was never applied):\n")
	default:
		fmt.Fprintf(w, "\nalso applied (the desired state changed since %s, the revision last applied: later commits, or values the unit substitutes):\n", short(r.AppliedRevision))
	}
	for _, d := range others {
		writeDiff(w, d)
	}
	fmt.Fprintln(w)
}

// writeDiff writes a diff, if any, after a blank line.
func writeDiff(w io.Writer, diff string) {
	if diff == "" {
		return
	}
	fmt.Fprintf(w, "\n%s", diff)
	if !strings.HasSuffix(diff, "\n") {
		fmt.Fprintln(w)
	}
}

// underReleases orders entries (of one stage) as the text and the
// comment nest them: the unit's own objects first, then each release's,
// in the order of r.Releases, each in its order among entries.
func underReleases(r *result.Result, entries []result.Entry) []result.Entry {
	rank := map[string]int{"": 0}
	for i, rel := range r.Releases {
		rank[rel.HelmRelease] = i + 1
	}
	out := slices.Clone(entries)
	slices.SortStableFunc(out, func(a, b result.Entry) int {
		ra, ok := rank[a.Release]
		if !ok {
			ra = len(rank)
		}
		rb, ok := rank[b.Release]
		if !ok {
			rb = len(rank)
		}
		return cmp.Compare(ra, rb)
	})
	return out
}

// releaseTitle names a release with its chart: "HelmRelease/apps/web
// (chart web 1.1.0)".
func releaseTitle(r *result.Result, name string) string {
	for _, rel := range r.Releases {
		if rel.HelmRelease == name {
			title := fmt.Sprintf("%s (chart %s %s)", name, rel.Chart, rel.Version)
			if rel.InstalledAs != "" {
				title += ", installed as " + rel.InstalledAs
			}
			return title
		}
	}
	return name
}

// releaseLines say, per Helm release of r, which chart it rendered and
// what became of its objects: "release HelmRelease/ns/web: chart web
// 1.1.0 (sha256:0123456789ab), 3 object(s): 1 configured, 2 unchanged".
func releaseLines(r *result.Result) []string {
	var out []string
	for _, rel := range r.Releases {
		counts := map[result.Action]int{}
		for _, e := range r.Entries {
			if e.Release == rel.HelmRelease && e.Stage != result.StageHooks {
				counts[e.Action]++
			}
		}
		var parts []string
		for _, a := range []result.Action{result.Created, result.Configured, result.Unchanged, result.Deleted, result.Skipped, result.Failed} {
			if counts[a] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[a], a))
			}
		}
		line := fmt.Sprintf("release %s: chart %s %s", rel.HelmRelease, rel.Chart, rel.Version)
		if rel.Digest != "" {
			line += fmt.Sprintf(" (sha256:%.12s)", strings.TrimPrefix(rel.Digest, "sha256:"))
		}
		if rel.InstalledAs != "" {
			line += ", installed as " + rel.InstalledAs
		}
		line += fmt.Sprintf(", %d object(s)", len(rel.Objects))
		if len(parts) > 0 {
			line += ": " + strings.Join(parts, ", ")
		}
		out = append(out, line)
	}
	return out
}
