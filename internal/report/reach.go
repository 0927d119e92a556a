package report

import (
	"fmt"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// notAffectedShown is how many units not affected one line names; the
// result JSON names them all.
const notAffectedShown = 20

// ReachText is one line saying how many units a diff against a base
// rendered, and which were not affected.
func ReachText(r *result.Reach) string {
	line := fmt.Sprintf("%d of %d units rendered: the change since %s (%d file(s)) reaches only those", r.Rendered, r.Units, short(r.Base), r.ChangedFiles)
	if r.NotAffected > 0 {
		line += fmt.Sprintf("; not affected (%d): %s", r.NotAffected, namesOf(r.NotAffectedUnits, r.NotAffected))
	}
	return line
}

// reachLine is ReachText in markdown; "" for no reach.
func reachLine(r *result.Reach) string {
	if r == nil {
		return ""
	}
	line := fmt.Sprintf("**%d of %d units rendered**: the change since `%s` (%d file(s)) reaches only those", r.Rendered, r.Units, short(r.Base), r.ChangedFiles)
	if r.NotAffected > 0 {
		names := make([]string, 0, notAffectedShown)
		for _, n := range r.NotAffectedUnits[:min(len(r.NotAffectedUnits), notAffectedShown)] {
			names = append(names, cell(n))
		}
		line += fmt.Sprintf("; not affected (%d): %s", r.NotAffected, namesOf(names, r.NotAffected))
	}
	return line + "."
}

// namesOf lists the first notAffectedShown of names, of total.
func namesOf(names []string, total int) string {
	shown := names[:min(len(names), notAffectedShown)]
	out := strings.Join(shown, ", ")
	if total > len(shown) {
		out += fmt.Sprintf(", … (%d more)", total-len(shown))
	}
	return out
}
