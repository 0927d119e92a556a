package pipeline

import (
	"context"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Diff reports what Apply would do, object by object, from server-side
// dry-runs, plus what prune would delete. It runs Apply's steps up to the
// apply itself and writes nothing to the cluster.
func Diff(ctx context.Context, c *kube.Clients, opts Options) (*result.Result, error) {
	r, ctx, err := start(ctx, c, opts, result.ModeDiff)
	if err != nil {
		return r.fail(ctx, err)
	}
	if res, skip := r.skipped(); skip {
		return res, nil
	}
	return r.diff(ctx)
}

func (r *run) diff(ctx context.Context) (*result.Result, error) {
	subs, err := r.variables(ctx)
	if err != nil {
		return r.fail(ctx, err)
	}
	if r.unchangedSinceLastApply(ctx, subs) {
		return r.diffDone()
	}
	d, err := r.build(ctx, subs)
	if err != nil {
		return r.fail(ctx, err)
	}
	p, err := r.validate(ctx, d)
	if err != nil {
		return r.fail(ctx, err)
	}
	r.res.Entries = append(r.res.Entries, p.dryRun.Entries()...)
	if _, err := r.prune(ctx, entriesOf(r.last), d.entries); err != nil {
		return r.fail(ctx, err)
	}
	r.threeWay(ctx, d, p)
	// What apply would refuse, the diff reports as a failure, so that a
	// pull request shows it before it is merged.
	if err := r.checkPruneBudget(inventory.Diff(entriesOf(r.last), d.entries)); err != nil {
		return r.fail(ctx, err)
	}
	return r.diffDone()
}

func (r *run) diffDone() (*result.Result, error) {
	return r.done(result.ReasonDiffSucceed, "dry-run of revision "+revisionOr(r.opts.Revision))
}
