// Package report renders a result.Result for people: the CLI's text output
// here; the PR comment and job summary (markdown) render the same value.
package report

import (
	"fmt"
	"io"
	"strings"

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
	for _, s := range append(result.Stages, result.StagePrune) {
		entries := byStage[s]
		if len(entries) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s:\n", s)
		for _, e := range entries {
			line := fmt.Sprintf("  %-10s  %-*s", e.Action, width, e.Object)
			if e.Source != "" {
				line += "  " + e.Source
			}
			if e.Reason != "" {
				line += "  (" + e.Reason + ")"
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	if showDiffs {
		for _, e := range r.Entries {
			if e.Diff != "" {
				fmt.Fprintf(w, "\n%s", e.Diff)
				if !strings.HasSuffix(e.Diff, "\n") {
					fmt.Fprintln(w)
				}
			}
		}
		if len(r.Entries) > 0 {
			fmt.Fprintln(w)
		}
	}
	if r.Namespace != "" {
		fmt.Fprintf(w, "objects without a namespace went to namespace %s\n", r.Namespace)
	}
	fmt.Fprintln(w, Summary(r))
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
