// Package prune deletes what left Git: objects in a unit's previous
// inventory that its new build no longer has. It only ever deletes what it
// can prove the unit owns.
package prune

import (
	"context"
	"fmt"
	"sort"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Options say whose objects are pruned.
type Options struct {
	// OwnerLabels are the labels every object of the unit carries
	// (ssa.ResourceManager.GetOwnerLabels); objects without them are not
	// the unit's to delete.
	OwnerLabels map[string]string
	// DryRun reports what would be deleted without deleting.
	DryRun bool
}

// Outcome is what a prune did.
type Outcome struct {
	Entries []result.Entry
	// Keep are candidates that must stay in the inventory: failed deletes,
	// and Namespaces skipped because they hold objects of others.
	Keep []inventory.Entry
}

// Run deletes candidates (the previous inventory minus the new build):
// namespaced objects first, then classes, then definitions such as
// Namespaces and CRDs, several at a time within each of those groups. An
// object is skipped, and says why, when it is already gone, is annotated
// prune: disabled, no longer carries the unit's owner labels, or is a
// Namespace that still holds objects the unit does not own. Failures are
// entries (and Keep), not errors; the error is the context's.
func Run(ctx context.Context, c *kube.Clients, m *ssa.ResourceManager, candidates []inventory.Entry, opts Options) (*Outcome, error) {
	sorted := append([]inventory.Entry(nil), candidates...)
	sort.SliceStable(sorted, func(i, j int) bool { return rank(sorted[i]) < rank(sorted[j]) })
	entries := make([]result.Entry, len(sorted))
	keep := make([]bool, len(sorted))
	for start := 0; start < len(sorted); {
		end := start + 1
		for end < len(sorted) && rank(sorted[end]) == rank(sorted[start]) {
			end++
		}
		var g errgroup.Group
		g.SetLimit(concurrency)
		for i := start; i < end; i++ {
			g.Go(func() error {
				entries[i], keep[i] = pruneOne(ctx, c, m, sorted[i], opts)
				return nil
			})
		}
		_ = g.Wait()
		start = end
	}
	out := &Outcome{Entries: entries}
	for i, k := range keep {
		if k {
			out.Keep = append(out.Keep, sorted[i])
		}
	}
	return out, ctx.Err()
}

// concurrency bounds the deletions in flight.
const concurrency = 8

func pruneOne(ctx context.Context, c *kube.Clients, m *ssa.ResourceManager, cand inventory.Entry, opts Options) (result.Entry, bool) {
	e := result.Entry{Object: cand.ID, Version: cand.Version, Stage: result.StagePrune, Action: result.Skipped}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(schema.FromAPIVersionAndKind(cand.Version, cand.Kind))
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: cand.Namespace, Name: cand.Name}, live)
	switch {
	case apierrors.IsNotFound(err):
		e.Reason = "already gone from the cluster"
		return e, false
	case err != nil:
		e.Action, e.Reason = result.Failed, fmt.Sprintf("reading it before deleting: %v", err)
		return e, true
	}
	if v, ok := annotation(live, object.PruneKey); ok && v == object.Disabled {
		e.Reason = "annotated prune: disabled; left in the cluster and dropped from the inventory"
		return e, false
	}
	for k, v := range opts.OwnerLabels {
		if live.GetLabels()[k] != v {
			e.Reason = fmt.Sprintf("label %s is not %q, so this unit no longer owns it; left alone", k, v)
			return e, false
		}
	}
	if utils.IsNamespace(live) {
		foreign, err := foreignObjects(ctx, c, live.GetName(), opts.OwnerLabels)
		if err != nil {
			e.Reason = fmt.Sprintf("cannot prove the namespace holds only this unit's objects (%v); not deleted", err)
			return e, true
		}
		if len(foreign) > 0 {
			e.Reason = fmt.Sprintf("namespace still holds %d object(s) this unit does not own (%s); not deleted", len(foreign), summarize(foreign))
			return e, true
		}
	}
	if opts.DryRun {
		e.Action = result.Deleted
		return e, false
	}
	cse, err := m.Delete(ctx, live, ssa.DeleteOptions{
		PropagationPolicy: metav1.DeletePropagationBackground,
		Inclusions:        opts.OwnerLabels,
		Exclusions:        object.Selector(object.PruneKey, object.Disabled),
	})
	if err != nil {
		e.Action, e.Reason = result.Failed, err.Error()
		return e, true
	}
	e.Action = result.Action(cse.Action)
	return e, false
}

// annotation looks key up under our prefix, then Flux's.
func annotation(u *unstructured.Unstructured, key string) (string, bool) {
	a := u.GetAnnotations()
	if v, ok := a[object.AnnotationPrefix+key]; ok {
		return v, true
	}
	v, ok := a[object.FluxAnnotationPrefix+key]
	return v, ok
}

// rank orders deletions: the reverse of the apply stages, so plain
// objects go first, then classes, then definitions.
func rank(e inventory.Entry) int {
	return -result.StageOfKind(e.Version, e.Kind).Order()
}

func summarize(ids []string) string {
	if len(ids) > 3 {
		return fmt.Sprintf("%s, %s, %s and %d more", ids[0], ids[1], ids[2], len(ids)-3)
	}
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += id
	}
	return s
}
