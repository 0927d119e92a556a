package pipeline

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Apply runs the unit on the cluster c. Every step that fails ends the run
// with its Flux reason on the result, and the inventory records the
// attempt. The error is non-nil exactly when the result is not ready.
func Apply(ctx context.Context, c *kube.Clients, opts Options) (*result.Result, error) {
	r, err := open(c, opts, result.ModeApply)
	if err != nil {
		return r.fail(ctx, err)
	}
	return r.applyUnit(ctx)
}

// apply is the pipeline: dependencies, variables, build, validate,
// record the inventory (old ∪ new), apply in stages, prune, record the
// inventory (what is kept), wait for health. Each step returns what it
// did; the entries it reports go on the result here, in step order,
// before its failure ends the run.
func (r *run) apply(ctx context.Context) (*result.Result, error) {
	if err := r.checkDependencies(ctx); err != nil {
		return r.fail(ctx, err)
	}
	subs, err := r.variables(ctx)
	if err != nil {
		return r.fail(ctx, err)
	}
	if unchanged, ok := r.unchangedSinceLastApply(ctx, subs); ok {
		r.report(unchanged)
		return r.waitAndSucceed(ctx, r.last.Entries, unchanged, nil, nil)
	}
	d, err := r.build(ctx, subs)
	if err != nil {
		return r.fail(ctx, err)
	}
	r.releases = releasesOf(d.Charts)
	r.res.Releases = resultReleases(d.Charts)
	r.chartHealth = d.Health
	if unchanged, ok := r.chartsUnchangedSinceLastApply(ctx, d); ok {
		r.report(unchanged)
		return r.waitAndSucceed(ctx, r.last.Entries, unchanged, nil, nil)
	}
	if err := r.keepIgnoredDrift(ctx, d); err != nil {
		return r.fail(ctx, err)
	}
	p, checked, err := r.validate(ctx, d)
	r.report(checked)
	if err != nil {
		return r.fail(ctx, err)
	}
	pending := r.pendingHooks(d)
	if err := r.checkHooks(ctx, pending); err != nil {
		return r.fail(ctx, err)
	}
	old := entriesOf(r.last)
	if err := r.checkPruneBudget(inventory.Diff(old, d.entries)); err != nil {
		return r.fail(ctx, err)
	}
	// Own the union before touching anything, so a crash between apply
	// and prune never leaves an object nobody owns.
	progressing := r.status(result.ReasonProgressing, "applying", false)
	if err := r.record(ctx, inventory.Union(old, d.entries), progressing); err != nil {
		return r.fail(ctx, failure(result.ReasonApplyFailed, err))
	}
	applied, err := r.execute(ctx, p, pending)
	r.report(applied.entries)
	r.report(applied.hooks)
	if err != nil {
		return r.fail(ctx, err)
	}
	keep, pruned, pruneErr := r.prune(ctx, old, applied.inventory)
	r.report(pruned)
	if err := r.record(ctx, keep, nil); err != nil {
		return r.fail(ctx, failure(result.ReasonApplyFailed, err))
	}
	if pruneErr != nil {
		return r.fail(ctx, pruneErr)
	}
	return r.waitAndSucceed(ctx, keep, slices.Concat(checked, applied.entries), applied.at, atLevel(pending, lastLevel(d.Charts)))
}

// execution is what execute did: the entries it reports, when each object
// was applied and, once every stage went through, the desired inventory
// entries with the resourceVersion each object has now; and the hooks it
// ran.
type execution struct {
	entries   []result.Entry
	inventory []inventory.Entry
	at        map[object.ID]time.Time
	hooks     []result.Entry
}

// execute carries out the plan stage by stage; the pre-install (or
// pre-upgrade) hooks of the releases in pending run once definitions and
// classes are applied, before the resources, as Helm runs them after a
// chart's CRDs. Untouched objects keep their resourceVersion; objects
// ssa's ApplyAll handled have none, so the next run checks them. On
// failure it still reports what it did.
func (r *run) execute(ctx context.Context, p *plan, pending []releaseHooks) (execution, error) {
	r.progress("applying %d object(s)", countWrites(p.dryRun))
	var done execution
	out, err := r.executeStages(ctx, p, pending, &done)
	if out != nil {
		done.entries, done.at = out.Entries, out.AppliedAt
	}
	if f := (*Failure)(nil); errors.As(err, &f) {
		return done, err // a hook or a release's wait said why
	}
	if err != nil {
		return done, failure(result.ReasonApplyFailed, err)
	}
	done.inventory = withVersions(p.entries, p.untouched, out.ResourceVersions)
	return done, nil
}

// executeStages applies p's stages. With Helm releases that have hooks
// to run or depend on each other, the resources stage goes in waves, one
// per level of the releases' dependsOn (the unit's other objects with the
// first): each wave's pre hooks (reported on done), its objects, and,
// before the next wave, the wait for them and their post hooks; the last
// wave's post hooks run after the unit's wait.
func (r *run) executeStages(ctx context.Context, p *plan, pending []releaseHooks, done *execution) (*apply.Outcome, error) {
	opts := r.applyOptions(p.Rendered)
	levels, last := releaseLevels(p.Charts), lastLevel(p.Charts)
	if len(pending) == 0 && last == 0 {
		return r.cl.applier.Execute(ctx, p.dryRun, opts)
	}
	first, rest := p.dryRun.SplitAt(result.StageResources)
	out, err := r.cl.applier.Execute(ctx, first, opts)
	if err != nil {
		return out, err
	}
	for level := 0; level <= last; level++ {
		ran, err := r.runHooks(ctx, atLevel(pending, level), false)
		done.hooks = append(done.hooks, ran...)
		if err != nil {
			return out, err
		}
		wave := only(rest, func(id object.ID) bool { return levels[id] == level })
		more, err := r.cl.applier.Execute(ctx, wave, opts)
		out.Add(more)
		if err != nil || level == last {
			return out, err
		}
		if err := r.waitForWave(ctx, level, more); err != nil {
			return out, err
		}
		ran, err = r.runHooks(ctx, atLevel(pending, level), true)
		done.hooks = append(done.hooks, ran...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// withVersions records, on the desired entries, the resourceVersion each
// object had when last seen as desired; entries without one are checked
// with a dry-run next time.
func withVersions(entries []inventory.Entry, maps ...map[object.ID]string) []inventory.Entry {
	out := make([]inventory.Entry, len(entries))
	for i, e := range entries {
		for _, m := range maps {
			if rv, ok := m[e.ID]; ok {
				e.ResourceVersion = rv
			}
		}
		out[i] = e
	}
	return out
}
