package pipeline

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
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

// apply is the pipeline: dependencies, service account, variables, build, validate,
// record the inventory (old ∪ new), apply in stages, prune, record the
// inventory (what is kept), wait for health. Each step returns what it
// did; the entries it reports go on the result here, in step order,
// before its failure ends the run.
func (r *run) apply(ctx context.Context) (*result.Result, error) {
	if err := r.checkDependencies(ctx); err != nil {
		return r.fail(ctx, err)
	}
	if err := r.checkAccount(ctx); err != nil {
		return r.fail(ctx, err)
	}
	subs, err := r.variables(ctx)
	if err != nil {
		return r.fail(ctx, err)
	}
	if unchanged, ok := r.unchangedSinceLastApply(ctx, subs); ok {
		r.report(unchanged)
		return r.waitAndSucceed(ctx, r.last.Entries, unchanged, nil, nil, nil)
	}
	d, err := r.build(ctx, subs)
	if err != nil {
		return r.fail(ctx, err)
	}
	r.releases = append(releasesOf(d.Charts), r.heldRecords...)
	r.res.Releases = resultReleases(d.Charts, d.targets)
	r.chartHealth = d.Health
	if unchanged, ok := r.chartsUnchangedSinceLastApply(ctx, d); ok {
		r.report(unchanged)
		return r.waitAndSucceed(ctx, r.last.Entries, unchanged, nil, nil, nil)
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
	if err := r.checkPruneBudget(inventory.Diff(old, inventory.Union(r.held, d.entries)), d.ResourceSets); err != nil {
		return r.fail(ctx, err)
	}
	// Own the union before touching anything, so a crash between apply
	// and prune never leaves an object nobody owns.
	progressing := r.status(result.ReasonProgressing, "applying", false)
	if err := r.record(ctx, inventory.Union(old, d.entries), progressing); err != nil {
		return r.fail(ctx, failure(result.ReasonApplyFailed, err))
	}
	return r.rollout(ctx, d, p, pending, old, checked)
}

// rollout applies the plan, prunes, waits, runs the post hooks and the
// tests: one attempt. A failure of a Helm release this run installs or
// upgrades is remediated as its HelmRelease says (see remediate), and the
// attempt starts over while the remediation retries.
func (r *run) rollout(ctx context.Context, d *desired, p *plan, pending []releaseHooks, old []inventory.Entry, checked []result.Entry) (*result.Result, error) {
	mark := len(r.res.Entries)
	for attempt := 1; ; attempt++ {
		keep, err := r.attempt(ctx, d, p, pending, old, checked)
		if err == nil {
			return r.succeed(ctx, keep)
		}
		if !r.remediate(ctx, d, attempt, err) || ctx.Err() != nil {
			return r.fail(ctx, err)
		}
		r.progress("retrying: attempt %d", attempt+1)
		r.res.Entries = r.res.Entries[:mark] // each attempt reports what it did
	}
}

// attempt is one try of rollout: the entries that become the inventory,
// or the failure.
func (r *run) attempt(ctx context.Context, d *desired, p *plan, pending []releaseHooks, old []inventory.Entry, checked []result.Entry) ([]inventory.Entry, error) {
	applied, err := r.execute(ctx, p, pending)
	r.report(applied.entries)
	r.report(applied.hooks)
	if err != nil {
		return nil, err
	}
	keep, pruned, pruneErr := r.prune(ctx, old, applied.inventory)
	r.report(pruned)
	if err := r.record(ctx, keep, nil); err != nil {
		return nil, failure(result.ReasonApplyFailed, err)
	}
	if pruneErr != nil {
		return nil, pruneErr
	}
	return r.waitAndFinish(ctx, keep, slices.Concat(checked, applied.entries), applied.at, atLevel(pending, lastLevel(d.Charts)), d.Charts)
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
// wave's post hooks run after the unit's wait. A release of another
// identity or cluster (see target) is applied whole, all its stages, in
// its wave after the unit's own objects of that wave, as helm-controller
// installs it once the Kustomization applied its HelmRelease: an account
// the unit creates, and the rights it gives it, exist by then.
func (r *run) executeStages(ctx context.Context, p *plan, pending []releaseHooks, done *execution) (*apply.Outcome, error) {
	opts := r.applyOptions(p.Rendered)
	levels, last := releaseLevels(p.Charts), lastLevel(p.Charts)
	if len(pending) == 0 && last == 0 && len(p.targets) == 0 {
		return r.cl.applier.Execute(ctx, p.dryRun, opts)
	}
	own := only(p.dryRun, func(id object.ID) bool { _, theirs := p.targets[id]; return !theirs })
	first, rest := own.SplitAt(result.StageResources)
	out, err := r.cl.applier.Execute(ctx, first, opts)
	if err != nil {
		return out, err
	}
	for level := 0; level <= last; level++ {
		ran, err := r.runHooks(ctx, ownHooks(atLevel(pending, level), p), false)
		done.hooks = append(done.hooks, ran...)
		if err != nil {
			return out, err
		}
		wave := only(rest, func(id object.ID) bool { return levels[id] == level })
		more, err := r.cl.applier.Execute(ctx, wave, opts)
		out.Add(more)
		for _, c := range p.Charts {
			if err != nil {
				break
			}
			if c.Level != level || !p.hasTarget(c) {
				continue
			}
			var theirs *apply.Outcome
			theirs, err = r.install(ctx, c, p, atLevel(pending, level), opts, done)
			more.Add(theirs)
			out.Add(theirs)
		}
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

// ownHooks are the hooks of pending whose releases are the unit's own
// identity's: the others run with their release (see install).
func ownHooks(pending []releaseHooks, p *plan) []releaseHooks {
	var out []releaseHooks
	for _, h := range pending {
		if !slices.ContainsFunc(p.Charts, func(c helm.Chart) bool { return c.Release.String() == h.release.Name && p.hasTarget(c) }) {
			out = append(out, h)
		}
	}
	return out
}

// install installs release c of another identity or cluster, once the
// unit's own objects of its wave are applied: its pre hooks (among
// pending; reported on done), then its objects, all its stages. When its
// account gets its rights from this apply (p.granted), the API server's
// authorizer learns of the Role or binding a moment after it is written:
// a refusal by RBAC is retried for a few seconds (about 8 in all) before
// it counts.
func (r *run) install(ctx context.Context, c helm.Chart, p *plan, pending []releaseHooks, opts apply.Options, done *execution) (*apply.Outcome, error) {
	granted := p.granted[c.Release.String()]
	var hooks []releaseHooks
	for _, h := range pending {
		if h.release.Name == c.Release.String() {
			hooks = append(hooks, h)
		}
	}
	var ran []result.Entry
	err := retryGranted(ctx, granted, func() error {
		var err error
		ran, err = r.runHooks(ctx, hooks, false)
		return err
	})
	done.hooks = append(done.hooks, ran...) // the last attempt's
	if err != nil {
		return nil, err
	}
	objs := map[object.ID]bool{}
	for _, id := range c.Objects {
		objs[id] = true
	}
	var out *apply.Outcome
	err = retryGranted(ctx, granted, func() error {
		var err error
		out, err = r.cl.applier.Execute(ctx, only(p.dryRun, func(id object.ID) bool { return objs[id] }), opts)
		return err
	})
	return out, err
}

// retryGranted runs do, again while RBAC refuses it and granted says the
// rights come with this apply, waiting 0.25 s, then twice as long each
// time, up to 4 s.
func retryGranted(ctx context.Context, granted bool, do func() error) error {
	for wait := 250 * time.Millisecond; ; wait *= 2 {
		err := do()
		if err == nil || !granted || !apply.RBACForbidden(err) || wait > 4*time.Second {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// hasTarget says whether chart c is of another identity or cluster than
// the unit's.
func (d *desired) hasTarget(c helm.Chart) bool {
	for _, id := range c.Objects {
		if _, ok := d.targets[id]; ok {
			return true
		}
	}
	return false
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
