package pipeline

import (
	"context"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// Diff reports what Apply would do, object by object, from server-side
// dry-runs, plus what prune would delete. It writes nothing to the cluster.
func Diff(ctx context.Context, c *kube.Clients, opts Options) (*result.Result, error) {
	r := newRun(c, opts, result.ModeDiff)
	if err := r.begin(ctx, result.ReasonArtifactFailed); err != nil {
		return r.fail(ctx, err)
	}
	if r.unchangedSinceLastApply(ctx) {
		return r.diffDone()
	}
	rendered, err := Render(ctx, opts)
	if err != nil {
		return r.fail(ctx, failure(result.ReasonBuildFailed, err))
	}
	objs := rendered.Objects
	r.res.Validation = opts.Validation
	if opts.Validation == result.ValidationClient {
		if err := validate.Client(objs, rendered.Sources); err != nil {
			return r.fail(ctx, failure(result.ReasonValidationFailed, err))
		}
	}
	r.mgr.SetOwnerLabels(objs, opts.Name, r.ns)
	untouched := r.untouched(ctx, entriesOf(objs))
	r.res.Entries = append(r.res.Entries, untouchedEntries(objs, untouched, rendered.Sources)...)
	plan, err := apply.DryRun(ctx, r.mgr, without(objs, untouched), apply.Options{Force: opts.Force, Sources: rendered.Sources, Diffs: true})
	r.res.Entries = append(r.res.Entries, plan.Entries()...)
	if err == nil {
		err = r.checkUnverified(plan, rendered.Sources)
	}
	if err != nil {
		return r.fail(ctx, failure(result.ReasonValidationFailed, err))
	}
	if opts.Prune && r.prev != nil {
		stale := inventory.Diff(r.prev.Entries, entriesOf(objs))
		out, err := prune.Run(ctx, r.actor, r.mgr, stale, prune.Options{OwnerLabels: r.mgr.GetOwnerLabels(opts.Name, r.ns), DryRun: true})
		if out != nil {
			r.res.Entries = append(r.res.Entries, out.Entries...)
		}
		if err != nil {
			return r.fail(ctx, failure(result.ReasonPruneFailed, err))
		}
	}
	return r.diffDone()
}

func (r *run) diffDone() (*result.Result, error) {
	r.res.Ready, r.res.Reason, r.res.Message = true, result.ReasonDiffSucceed, "dry-run of revision "+revisionOr(r.opts.Revision)
	r.finish()
	return r.res, nil
}
