package pipeline

import (
	"context"
	"fmt"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Delete garbage-collects everything unit opts.Name owns, with the same
// safeguards as prune, then removes its inventory. Objects that could not
// be deleted stay in the inventory and the run fails.
func Delete(ctx context.Context, c *kube.Clients, opts Options) (*result.Result, error) {
	r := newRun(c, opts, result.ModeDelete)
	if err := r.begin(ctx, result.ReasonArtifactFailed); err != nil {
		return r.fail(ctx, err)
	}
	prev := r.prev
	if prev == nil {
		return r.fail(ctx, failure(result.ReasonArtifactFailed,
			fmt.Errorf("unit '%s' has no inventory in namespace %s: nothing to delete (see 'kustomize-deploy status')", opts.Name, r.ns)))
	}
	r.progress("deleting %d object(s) of unit %s", len(prev.Entries), opts.Name)
	out, err := prune.Run(ctx, r.actor, r.mgr, prev.Entries, prune.Options{OwnerLabels: r.mgr.GetOwnerLabels(opts.Name, r.ns)})
	if out != nil {
		r.res.Entries = append(r.res.Entries, out.Entries...)
	}
	if err == nil {
		err = pruneFailures(out)
	}
	if err == nil && out != nil && len(out.Keep) > 0 {
		err = fmt.Errorf("%d object(s) could not be deleted and stay in the inventory (see the skipped entries)", len(out.Keep))
	}
	if err != nil {
		if out != nil {
			_ = r.saveInventory(ctx, out.Keep, nil)
		}
		return r.fail(ctx, failure(result.ReasonPruneFailed, err))
	}
	if err := inventory.Delete(ctx, c.Client, r.ns, opts.Name); err != nil {
		return r.fail(ctx, failure(result.ReasonPruneFailed, err))
	}
	r.res.Ready, r.res.Reason, r.res.Message = true, result.ReasonDeleteSucceed, fmt.Sprintf("deleted unit %s and its inventory", opts.Name)
	r.finish()
	return r.res, nil
}
