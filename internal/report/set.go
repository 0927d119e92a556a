package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// TextSet writes a run of several units: each unit's change list (diffs
// when showDiffs) under its name, then a table of every unit with its
// reason and message, then a one-line count.
func TextSet(w io.Writer, s *result.Set, showDiffs bool) {
	for _, r := range s.Units {
		fmt.Fprintf(w, "== %s\n", r.Unit)
		Text(w, r, showDiffs)
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "UNIT\tREADY\tREASON\tCHANGES\tMESSAGE")
	for _, r := range s.Units {
		c := r.Counts
		changes := fmt.Sprintf("+%d ~%d -%d", c.Created, c.Configured, c.Deleted)
		msg, _, _ := strings.Cut(r.Message, "\n")
		fmt.Fprintf(tw, "%s\t%t\t%s\t%s\t%s\n", r.Unit, r.Ready, r.Reason, changes, msg)
	}
	tw.Flush()
	if s.Reach != nil {
		fmt.Fprintln(w, ReachText(s.Reach))
	}
	fmt.Fprintln(w, SetSummary(s))
}

// SetSummary is the one-line outcome of a run of several units.
func SetSummary(s *result.Set) string {
	var ready, failed, skipped int
	for _, r := range s.Units {
		switch {
		case r.Failed():
			failed++
		case r.Reason.SkipsByDesign():
			skipped++
		default:
			ready++
		}
	}
	verdict := "succeeded"
	if failed > 0 {
		verdict = "failed"
	}
	out := fmt.Sprintf("%s of %d unit(s) %s: %d ready, %d failed, %d skipped on purpose", s.Mode, len(s.Units), verdict, ready, failed, skipped)
	if s.Duration != "" {
		out += " in " + s.Duration
	}
	return out
}
