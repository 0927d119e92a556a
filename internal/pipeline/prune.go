package pipeline

import (
	"context"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// prune deletes what left the build, the entries of old that desired
// lacks, and returns what the inventory keeps: desired, and whatever of
// old could not be proven gone (see prune.Run); and the entries it
// reports. Without pruning, objects that left the build stay owned. A run
// that does not write only says what would be deleted.
func (r *run) prune(ctx context.Context, old, desired []inventory.Entry) ([]inventory.Entry, []result.Entry, error) {
	desired = inventory.Union(r.held, desired) // left out by tags: kept
	if !r.opts.Prune {
		return inventory.Union(undesired(old), desired), nil, nil
	}
	stale := r.orphanFlux(inventory.Diff(old, desired))
	if len(stale) > 0 && r.mode.Writes() {
		r.progress("pruning %d object(s) no longer in the build", len(stale))
	}
	kept, removed, err := r.remove(ctx, stale)
	return inventory.Union(desired, kept), removed, err
}

// remove deletes candidates, only what the unit provably owns, and
// returns those that stay in the inventory, and the entries it reports:
// on failure too, what it reached.
func (r *run) remove(ctx context.Context, candidates []inventory.Entry) ([]inventory.Entry, []result.Entry, error) {
	if len(candidates) == 0 {
		return nil, nil, nil
	}
	out, err := r.cl.pruner.Prune(ctx, candidates, !r.mode.Writes())
	if out == nil {
		return undesired(candidates), nil, failure(result.ReasonPruneFailed, err)
	}
	if err == nil {
		err = out.Err()
	}
	if err != nil {
		return undesired(out.Keep), out.Entries, failure(result.ReasonPruneFailed, err)
	}
	return undesired(out.Keep), out.Entries, nil
}

// undesired drops what a run recorded of objects it no longer applies
// (kept by prune safeguards, or with pruning off): only desired objects are
// ever untouched.
func undesired(entries []inventory.Entry) []inventory.Entry {
	out := make([]inventory.Entry, len(entries))
	for i, e := range entries {
		e.Digest, e.ResourceVersion = "", ""
		out[i] = e
	}
	return out
}

// checkPruneBudget refuses a prune of stale over the run's budget.
func (r *run) checkPruneBudget(stale []inventory.Entry) error {
	if !r.opts.Prune {
		return nil
	}
	if r.opts.RunFlux {
		stale, _ = splitFlux(stale)
	}
	ids := make([]object.ID, len(stale))
	for i, e := range stale {
		ids[i] = e.ID
	}
	if err := r.opts.PruneBudget.Check(ids); err != nil {
		return failure(result.ReasonPruneFailed, err)
	}
	return nil
}
