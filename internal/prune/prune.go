// Package prune deletes what left Git: objects in a unit's previous
// inventory that its new build no longer has. It only ever deletes what it
// can prove the unit owns.
package prune

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/fluxcd/pkg/ssa/utils"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Cluster is what pruning needs of a cluster.
type Cluster interface {
	// Get reads the live object of an inventory entry; a missing one is
	// an apierrors NotFound error, one of a kind the cluster does not
	// serve (its CRD deleted, or never created) a *kube.NotServedError.
	Get(ctx context.Context, e inventory.Entry) (*unstructured.Unstructured, error)
	// Delete deletes a live object, and says what it did (deleted, or
	// skipped when the object changed hands in the meantime).
	Delete(ctx context.Context, live *unstructured.Unstructured) (result.Action, error)
	// Foreign lists, as Kind/namespace/name, the objects in namespace
	// that carry neither owner nor an ownerReference, and that the control
	// plane did not create itself: what deleting the namespace would take
	// with it although the unit never owned it.
	Foreign(ctx context.Context, namespace string, owner map[string]string) ([]string, error)
}

// Options say whose objects are pruned.
type Options struct {
	// OwnerLabels are the labels every object of the unit carries
	// (apply.OwnerLabels); objects without them are not the unit's to
	// delete.
	OwnerLabels map[string]string
	// DryRun reports what would be deleted without deleting.
	DryRun bool
	// Selector, when set, limits pruning to the objects whose labels
	// match it (kustomize.fluxcd.io/v1alpha1's spec.prune); the others
	// are left in the cluster and dropped from the inventory.
	Selector labels.Selector
}

// Outcome is what a prune did.
type Outcome struct {
	// Entries are the candidates it reached, each with what happened.
	Entries []result.Entry
	// Keep are the candidates that must stay in the inventory, because
	// they may still exist: failed reads and deletes, Namespaces still
	// holding objects of others, and every candidate not reached before
	// the context ended.
	Keep []inventory.Entry
}

// Err joins the failures among the entries, one line per cause (a
// Forbidden shared by fifty objects is one line); nil when there were
// none.
func (o *Outcome) Err() error {
	var failures []object.Failure
	for _, e := range o.Entries {
		if e.Action == result.Failed {
			failures = append(failures, object.Failure{Located: object.Located{ID: e.Object}, Cause: "deleting it: " + e.Reason})
		}
	}
	var errs []error
	for _, g := range object.ByCause(failures) {
		errs = append(errs, errors.New(g.String()))
	}
	return errors.Join(errs...)
}

// Run deletes candidates (the previous inventory minus the new build) in
// the reverse of the apply stages: namespaced objects first, then
// classes, then definitions such as Namespaces and CRDs, several at a time
// within each. An object is skipped, and says why, when it is already
// gone, is annotated prune: disabled, no longer carries the unit's owner
// labels, or is a Namespace that still holds objects the unit does not
// own. Failures are entries (and Keep), not errors; the error is the
// context's, and then Keep holds every candidate not yet decided.
func Run(ctx context.Context, c Cluster, candidates []inventory.Entry, opts Options) (*Outcome, error) {
	sorted := append([]inventory.Entry(nil), candidates...)
	sort.SliceStable(sorted, func(i, j int) bool { return rank(sorted[i]) < rank(sorted[j]) })
	entries := make([]result.Entry, len(sorted))
	decided := make([]bool, len(sorted))
	keep := make([]bool, len(sorted))
	for start := 0; start < len(sorted) && ctx.Err() == nil; {
		end := start + 1
		for end < len(sorted) && rank(sorted[end]) == rank(sorted[start]) {
			end++
		}
		var g errgroup.Group
		g.SetLimit(concurrency)
		for i := start; i < end; i++ {
			g.Go(func() error {
				if ctx.Err() != nil {
					return nil // not reached: kept
				}
				entries[i], keep[i] = pruneOne(ctx, c, sorted[i], opts)
				decided[i] = true
				return nil
			})
		}
		_ = g.Wait()
		start = end
	}
	out := &Outcome{Entries: []result.Entry{}}
	for i := range sorted {
		if decided[i] {
			out.Entries = append(out.Entries, entries[i])
		}
		if keep[i] || !decided[i] {
			out.Keep = append(out.Keep, sorted[i])
		}
	}
	return out, ctx.Err()
}

// concurrency bounds the deletions in flight.
const concurrency = 8

func pruneOne(ctx context.Context, c Cluster, cand inventory.Entry, opts Options) (result.Entry, bool) {
	e := result.Entry{Object: cand.ID, Version: cand.Version, Stage: result.StagePrune, Action: result.Skipped}
	live, err := c.Get(ctx, cand)
	var unserved *kube.NotServedError
	switch {
	case apierrors.IsNotFound(err):
		e.Reason = "already gone from the cluster"
		return e, false
	case errors.As(err, &unserved):
		e.Reason = unserved.Error() + ": no such object can exist; dropped from the inventory"
		return e, false
	case err != nil:
		e.Action, e.Reason = result.Failed, fmt.Sprintf("reading it before deleting: %v", err)
		return e, true
	}
	if v, ok := object.Setting(live.GetAnnotations(), object.PruneKey); ok && v == object.Disabled {
		e.Reason = "annotated prune: disabled; left in the cluster and dropped from the inventory"
		return e, false
	}
	if live.GetAnnotations()[object.HelmResourcePolicy] == object.HelmKeep {
		e.Reason = "annotated " + object.HelmResourcePolicy + ": " + object.HelmKeep + " (Helm never deletes it); left in the cluster and dropped from the inventory"
		return e, false
	}
	for _, k := range sortedKeys(opts.OwnerLabels) {
		if v := opts.OwnerLabels[k]; live.GetLabels()[k] != v {
			e.Reason = fmt.Sprintf("label %s is not %q, so this unit no longer owns it; left alone", k, v)
			return e, false
		}
	}
	if opts.Selector != nil && !opts.Selector.Matches(labels.Set(live.GetLabels())) {
		e.Reason = fmt.Sprintf("its labels do not match the prune selector %q; left in the cluster and dropped from the inventory", opts.Selector)
		return e, false
	}
	if utils.IsNamespace(live) {
		foreign, err := c.Foreign(ctx, live.GetName(), opts.OwnerLabels)
		if err != nil {
			e.Reason = fmt.Sprintf("cannot prove the namespace holds only this unit's objects (%v); not deleted", err)
			return e, true
		}
		if len(foreign) > 0 {
			e.Reason = fmt.Sprintf("namespace still holds %d object(s) this unit does not own (%s); not deleted", len(foreign), object.Few(foreign))
			return e, true
		}
	}
	if opts.DryRun {
		e.Action = result.Deleted
		return e, false
	}
	action, err := c.Delete(ctx, live)
	if err != nil {
		e.Action, e.Reason = result.Failed, err.Error()
		return e, true
	}
	e.Action = action
	return e, false
}

// rank orders deletions: the reverse of the apply stages, so plain
// objects go first, then classes, then definitions; Namespaces last of
// all, once the CRDs leaving with them are gone, so that the check that
// a Namespace holds nothing foreign sees what is really left.
func rank(e inventory.Entry) int {
	r := -2 * result.StageOfKind(e.Version, e.Kind).Order()
	if e.Kind == "Namespace" && (e.Version == "v1" || e.Version == "") {
		r++
	}
	return r
}

// gone reports whether err, reading an object, proves it does not exist:
// it is not found, or its kind is not served.
func gone(err error) bool {
	var unserved *kube.NotServedError
	return apierrors.IsNotFound(err) || errors.As(err, &unserved)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WaitGone waits until none of entries is left in the cluster (finalizers
// done, as Flux's WaitForTermination deletion policy waits), looking every
// interval, for at most timeout; the error names what is left.
func WaitGone(ctx context.Context, c Cluster, entries []inventory.Entry, timeout, interval time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	left := entries
	for {
		var still []inventory.Entry
		for _, e := range left {
			_, err := c.Get(ctx, e)
			if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
				// No wait makes this readable.
				return fmt.Errorf("cannot tell whether %s is gone: %w", e.ID, err)
			}
			if !gone(err) {
				still = append(still, e)
			}
		}
		if len(still) == 0 {
			return nil
		}
		left = still
		select {
		case <-ctx.Done():
			var names []string
			for _, e := range left {
				names = append(names, e.ID.String())
			}
			return fmt.Errorf("after %s, %d object(s) are still terminating: %s", timeout, len(left), object.Few(names))
		case <-time.After(interval):
		}
	}
}
