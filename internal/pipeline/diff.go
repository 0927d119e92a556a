package pipeline

import (
	"context"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Diff reports what Apply would do, object by object, from server-side
// dry-runs, plus what prune would delete, and writes nothing to the
// cluster. It runs Apply's steps up to the apply itself, all but the
// dependency check: as it writes nothing, a reviewer sees the change even
// while a unit it depends on is not ready (which Apply then refuses, with
// DependencyNotReady).
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

// diff is apply's pipeline without its writes: variables, build,
// validate (the dry-run is the diff; Helm hooks are checked, and those
// the apply would run are noted), what prune would delete, the
// three-way split of a pull request's diff, the prune budget. The entries
// each step returns go on the result here, in step order.
func (r *run) diff(ctx context.Context) (*result.Result, error) {
	// No dependency check: see Diff.
	if err := r.checkAccount(ctx); err != nil {
		return r.fail(ctx, err)
	}
	subs, err := r.variables(ctx)
	if err != nil {
		return r.fail(ctx, err)
	}
	if unchanged, ok := r.unchangedSinceLastApply(ctx, subs); ok {
		r.report(unchanged)
		return r.diffDone()
	}
	d, err := r.build(ctx, subs)
	if err != nil {
		return r.fail(ctx, err)
	}
	r.res.Releases = resultReleases(d.Charts, d.targets)
	if unchanged, ok := r.chartsUnchangedSinceLastApply(ctx, d); ok {
		r.report(unchanged)
		return r.diffDone()
	}
	if err := r.keepIgnoredDrift(ctx, d); err != nil {
		return r.fail(ctx, err)
	}
	p, checked, err := r.validate(ctx, d)
	r.report(checked)
	if err != nil {
		// What rendered is still reviewed: its images and dangers beside
		// the failure.
		r.reviewFailed(ctx, d)
		return r.fail(ctx, err)
	}
	r.report(p.dryRun.Entries())
	if r.opts.Provide != nil {
		r.opts.Provide(prerequisites(r.opts.Name, p.dryRun))
	}
	pending := r.pendingHooks(d)
	if err := r.checkHooks(ctx, pending); err != nil {
		return r.fail(ctx, err)
	}
	r.res.Notes = append(r.res.Notes, hookNotes(pending)...)
	_, pruned, err := r.prune(ctx, entriesOf(r.last), d.entries)
	r.report(pruned)
	if err != nil {
		return r.fail(ctx, err)
	}
	r.threeWay(ctx, d, p, r.res.Entries)
	// What apply would refuse, the diff reports as a failure, so that a
	// pull request shows it before it is merged.
	if err := r.checkPruneBudget(inventory.Diff(entriesOf(r.last), inventory.Union(r.held, d.entries)), d.ResourceSets); err != nil {
		return r.fail(ctx, err)
	}
	return r.diffDone()
}

func (r *run) diffDone() (*result.Result, error) {
	return r.done(result.ReasonDiffSucceed, "dry-run of revision "+revisionOr(r.opts.Revision))
}
