package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// removeHelmRecords removes, with Options.RemoveHelmRecords, the storage
// records of the Helm releases the unit took over (see takenOver), as the
// identity and on the cluster their objects are applied (see target). A
// release that charts render too is looked for in its HelmRelease's
// storageNamespace as well, where helm-controller keeps its records. It
// runs only once the unit applied and became ready, so a failed run
// leaves the old release whole, to roll back to.
func (r *run) removeHelmRecords(ctx context.Context, applied []result.Entry, charts []helm.Chart) error {
	if !r.opts.RemoveHelmRecords || r.cl.records == nil {
		return nil
	}
	for _, t := range r.takenOver(applied) {
		ns, name, _ := strings.Cut(t.release, "/")
		namespaces := []string{ns}
		for _, c := range charts {
			if c.Key() == t.release && c.StorageNamespace != "" && c.StorageNamespace != ns {
				namespaces = append(namespaces, c.StorageNamespace)
			}
		}
		for _, in := range namespaces {
			removed, err := r.cl.records.Remove(ctx, t.from, in, name)
			if len(removed) > 0 {
				r.note("removed the records of Helm release %s: %s", t.release, strings.Join(removed, ", "))
			}
			if err != nil {
				return failure(result.ReasonApplyFailed, fmt.Errorf("the unit applied, but removing the records of Helm release %s failed: %w", t.release, err))
			}
		}
	}
	return nil
}

// takeover is a Helm release (namespace/name) whose objects a run took
// over, and one of those objects.
type takeover struct {
	release string
	from    object.ID
}

// takenOver are the Helm releases whose objects this run took over, as
// their ownership annotations named them. Only those: a release of the
// same name whose objects the unit does not render is not provably the
// unit's, and its records stay.
func (r *run) takenOver(applied []result.Entry) []takeover {
	seen := map[string]object.ID{}
	for _, e := range applied {
		if ns, name, ok := apply.TakenOverFrom(e); ok {
			if _, dup := seen[ns+"/"+name]; !dup {
				seen[ns+"/"+name] = e.Object
			}
		}
	}
	out := make([]takeover, 0, len(seen))
	for _, rel := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, takeover{release: rel, from: seen[rel]})
	}
	return out
}
