package pipeline

import (
	"context"
	"fmt"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Delete garbage-collects everything unit opts.Name owns, with the same
// safeguards as prune, then removes its inventory. Objects that could not
// be deleted stay in the inventory and the run fails. A unit with no
// inventory has nothing to delete: that is a success, and says so.
func Delete(ctx context.Context, c *kube.Clients, opts Options) (*result.Result, error) {
	r, ctx, err := start(ctx, c, opts, result.ModeDelete)
	defer r.end()
	if err != nil {
		return r.fail(ctx, err)
	}
	if res, skip := r.skipped(); skip {
		return res, nil
	}
	return r.delete(ctx)
}

// deleted are the inventory entries of the objects removed says were
// deleted (not those skipped, which stay in the cluster on purpose).
func (r *run) deleted(removed []result.Entry) []inventory.Entry {
	gone := map[object.ID]bool{}
	for _, e := range removed {
		if e.Action == result.Deleted {
			gone[e.Object] = true
		}
	}
	var out []inventory.Entry
	for _, e := range entriesOf(r.last) {
		if gone[e.ID] {
			out = append(out, e)
		}
	}
	return out
}

func (r *run) delete(ctx context.Context) (*result.Result, error) {
	if r.last == nil {
		// Deleted already, or never applied: a teardown run twice is done.
		msg := fmt.Sprintf("unit %s has no inventory in namespace %s: nothing to delete", r.opts.Name, r.ns)
		r.note("%s", msg)
		return r.done(result.ReasonDeleteSucceed, msg)
	}
	r.progress("deleting %d object(s) of unit %s", len(r.last.Entries), r.opts.Name)
	keep, removed, err := r.remove(ctx, r.last.Entries)
	r.report(removed)
	if err == nil && len(keep) > 0 {
		err = failure(result.ReasonPruneFailed, fmt.Errorf("%d object(s) could not be deleted and stay in the inventory (see the skipped entries)", len(keep)))
	}
	if err != nil {
		if rerr := r.record(ctx, keep, nil); rerr != nil {
			r.progress("warning: recording the objects that stay: %v", rerr)
		}
		return r.fail(ctx, err)
	}
	if r.opts.WaitForTermination {
		r.progress("waiting up to %s for the deleted objects to be gone", r.opts.Timeout)
		if err := r.cl.pruner.WaitGone(ctx, r.deleted(removed), r.opts.Timeout); err != nil {
			return r.fail(ctx, failure(result.ReasonPruneFailed, err))
		}
	}
	if err := r.cl.store.Delete(ctx, r.ns, r.opts.Name); err != nil {
		return r.fail(ctx, failure(result.ReasonPruneFailed, err))
	}
	return r.done(result.ReasonDeleteSucceed, fmt.Sprintf("deleted unit %s and its inventory", r.opts.Name))
}
