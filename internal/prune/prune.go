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
// Namespaces and CRDs. An object is skipped, and says why, when it is
// already gone, is annotated prune: disabled, no longer carries the unit's
// owner labels, or is a Namespace that still holds objects the unit does not
// own.
func Run(ctx context.Context, c *kube.Clients, m *ssa.ResourceManager, candidates []inventory.Entry, opts Options) (*Outcome, error) {
	out := &Outcome{}
	sorted := append([]inventory.Entry(nil), candidates...)
	sort.SliceStable(sorted, func(i, j int) bool { return rank(sorted[i]) < rank(sorted[j]) })
	for _, cand := range sorted {
		e, keep, err := pruneOne(ctx, c, m, cand, opts)
		if err != nil {
			return out, err
		}
		out.Entries = append(out.Entries, e)
		if keep {
			out.Keep = append(out.Keep, cand)
		}
	}
	return out, nil
}

func pruneOne(ctx context.Context, c *kube.Clients, m *ssa.ResourceManager, cand inventory.Entry, opts Options) (result.Entry, bool, error) {
	e := result.Entry{Object: cand.ID, Version: cand.Version, Stage: result.StagePrune, Action: result.Skipped}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(schema.FromAPIVersionAndKind(cand.Version, cand.Kind))
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: cand.Namespace, Name: cand.Name}, live)
	switch {
	case apierrors.IsNotFound(err):
		e.Reason = "already gone from the cluster"
		return e, false, nil
	case err != nil:
		e.Action, e.Reason = result.Failed, fmt.Sprintf("reading it before deleting: %v", err)
		return e, true, nil
	}
	if v, ok := annotation(live, object.PruneKey); ok && v == object.Disabled {
		e.Reason = "annotated prune: disabled; left in the cluster and dropped from the inventory"
		return e, false, nil
	}
	for k, v := range opts.OwnerLabels {
		if live.GetLabels()[k] != v {
			e.Reason = fmt.Sprintf("label %s is not %q, so this unit no longer owns it; left alone", k, v)
			return e, false, nil
		}
	}
	if utils.IsNamespace(live) {
		foreign, err := foreignObjects(ctx, c, live.GetName(), opts.OwnerLabels)
		if err != nil {
			e.Reason = fmt.Sprintf("cannot prove the namespace holds only this unit's objects (%v); not deleted", err)
			return e, true, nil
		}
		if len(foreign) > 0 {
			e.Reason = fmt.Sprintf("namespace still holds %d object(s) this unit does not own (%s); not deleted", len(foreign), summarize(foreign))
			return e, true, nil
		}
	}
	if opts.DryRun {
		e.Action = result.Deleted
		return e, false, nil
	}
	cse, err := m.Delete(ctx, live, ssa.DeleteOptions{
		PropagationPolicy: metav1.DeletePropagationBackground,
		Inclusions:        opts.OwnerLabels,
		Exclusions:        object.Selector(object.PruneKey, object.Disabled),
	})
	if err != nil {
		e.Action, e.Reason = result.Failed, err.Error()
		return e, true, nil
	}
	e.Action = result.Action(cse.Action)
	return e, false, nil
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

// rank orders deletions: plain objects, then classes, then definitions.
func rank(e inventory.Entry) int {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(e.Version, e.Kind))
	switch {
	case utils.IsClusterDefinition(u):
		return 2
	case utils.IsClassDefinition(u):
		return 1
	}
	return 0
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
