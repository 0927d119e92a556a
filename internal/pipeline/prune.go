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

// checkPruneBudget refuses a prune of stale over the run's budget. What
// a ResourceSet of the build (resourceSets) generated and generates no
// more is collected as the operator collects it: its kind does not
// protect it (see prune.Budget.CheckCollected); what a ResourceSet that
// left the build generated stays protected.
func (r *run) checkPruneBudget(stale []inventory.Entry, resourceSets []object.ID) error {
	if !r.opts.Prune {
		return nil
	}
	if r.opts.RunFlux {
		stale, _ = splitFlux(stale)
	}
	present := map[string]bool{}
	for _, id := range resourceSets {
		present[id.String()] = true
	}
	ids := make([]object.ID, len(stale))
	var collected map[object.ID]bool
	for i, e := range stale {
		ids[i] = e.ID
		if e.Generator != "" && present[e.Generator] {
			if collected == nil {
				collected = map[object.ID]bool{}
			}
			collected[e.ID] = true
		}
	}
	if err := r.opts.PruneBudget.CheckCollected(ids, collected); err != nil {
		return failure(result.ReasonPruneFailed, err)
	}
	return nil
}
