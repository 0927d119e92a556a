package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// removeHelmRecords removes, with Options.RemoveHelmRecords, the storage
// records of the Helm releases the unit took over (see takenOver). It
// runs only once the unit applied and became ready, so a failed run
// leaves the old release whole, to roll back to.
func (r *run) removeHelmRecords(ctx context.Context, applied []result.Entry) error {
	if !r.opts.RemoveHelmRecords || r.cl.records == nil {
		return nil
	}
	for _, rel := range r.takenOver(applied) {
		ns, name, _ := strings.Cut(rel, "/")
		removed, err := r.cl.records.Remove(ctx, ns, name)
		if len(removed) > 0 {
			r.note("removed the records of Helm release %s: %s", rel, strings.Join(removed, ", "))
		}
		if err != nil {
			return failure(result.ReasonApplyFailed, fmt.Errorf("the unit applied, but removing the records of Helm release %s failed: %w", rel, err))
		}
	}
	return nil
}

// takenOver are the Helm releases (namespace/name) whose objects this
// run took over, as their ownership annotations named them. Only those:
// a release of the same name whose objects the unit does not render is
// not provably the unit's, and its records stay.
func (r *run) takenOver(applied []result.Entry) []string {
	var out []string
	for _, e := range applied {
		if ns, name, ok := apply.TakenOverFrom(e); ok {
			out = append(out, ns+"/"+name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
