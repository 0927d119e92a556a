package pipeline

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// An apply takes the unit's lock before it writes anything, and holds it
// to the end. Most applies of a configuration of many units write
// nothing, though: the last apply succeeded, the build would read the
// same inputs and every object is untouched since (unchangedSinceLastApply).
// Such a run only reads, so it goes as far as it can without the lock:
//
//   - if the inventory already records what the run would (Ready at this
//     revision), it ends there, having written nothing;
//   - if only the status would change (a new commit that left the unit
//     alone), or the wait for health failed, it takes the lock to record
//     that, provided the inventory is still the one it read;
//   - otherwise (the unit must be built, the inventory moved, the lock
//     could not be had), it stops before writing anything, and the apply
//     starts over under the lock, as if this had not been tried.
//
// Writes keep the lock's guarantee: one run at a time, and over what it
// read.

// applyUnit runs an apply of r's unit: without the lock while it only
// reads (applyUnlocked), else under it from the start. r is connected
// and has read nothing yet.
func (r *run) applyUnit(ctx context.Context) (*result.Result, error) {
	res, done, err := r.applyUnlocked(ctx)
	r.end()
	if done {
		return res, err
	}
	l := r.fresh()
	if r.moved {
		l.movedAt = r.last.ResourceVersion
	}
	l, ctx, err = l.begin(ctx, l.cl)
	defer l.end()
	if err != nil {
		return l.fail(ctx, err)
	}
	if res, skip := l.skipped(); skip {
		return res, nil
	}
	return l.apply(ctx)
}

// fresh is a new run of r's unit on r's cluster, with r's options, started
// when r was.
func (r *run) fresh() *run {
	f := newRun(r.given, r.mode)
	f.ns, f.objNS, f.owner, f.cl, f.render = r.ns, r.objNS, r.owner, r.cl, r.render
	if pre := r.prebuilt; pre != nil {
		// What applyUnlocked rendered is rendered once: taken, with the
		// same values, instead of rendering again.
		render := r.render
		f.render = func(ctx context.Context, o Options) (*Rendered, error) {
			if pre != nil && sameValues(o, pre.opts) {
				rendered := pre.rendered
				pre = nil
				return rendered, nil
			}
			return render(ctx, o)
		}
	}
	f.start, f.res.StartedAt = r.start, r.res.StartedAt
	return f
}

// applyUnlocked is the apply without the lock (see above); done is false
// when it stopped without writing, for the apply to start over under
// the lock.
func (r *run) applyUnlocked(ctx context.Context) (res *result.Result, done bool, err error) {
	if !r.mode.Writes() || r.opts.Recheck || r.opts.RemoveHelmRecords {
		return nil, false, nil
	}
	last, err := r.loadUnlocked(ctx)
	if err != nil {
		// Already asked kube.MaxAttempts times: the run under the lock
		// would only ask as often again.
		res, err := r.fail(ctx, failure(result.ReasonArtifactFailed, err))
		return res, true, err
	}
	if last == nil || last.Inputs == nil || last.Status.Ready.Status != "True" {
		return nil, false, nil
	}
	r.found(last)
	if res, skip := r.skipped(); skip {
		return res, true, nil // nothing written
	}
	if r.dependencies(ctx, false) != nil {
		return nil, false, nil // waited for (and recorded) under the lock
	}
	subs, err := r.variables(ctx)
	if err != nil {
		return nil, false, nil
	}
	unchanged, ok := r.unchangedSinceLastApply(ctx, subs)
	if !ok && len(last.Status.Releases) > 0 && !r.moved && len(r.opts.IncludeTags)+len(r.opts.ExcludeTags) == 0 {
		unchanged, ok = r.chartsUnchangedUnlocked(ctx, subs)
	}
	if !ok {
		return nil, false, nil
	}
	r.report(unchanged)
	if ids := r.waitFor(unchanged, nil); len(ids) > 0 {
		if _, err := r.wait(ctx, ids); err != nil {
			return r.underLock(ctx, func(ctx context.Context) (*result.Result, error) {
				return r.fail(ctx, err)
			})
		}
	}
	r.healthy = r.healthKey()
	message := "applied revision " + revisionOr(r.opts.Revision)
	if sameStatus(r.status(result.ReasonApplySucceed, message, true), &last.Status) {
		res, err := r.done(result.ReasonApplySucceed, message)
		return res, true, err
	}
	return r.underLock(ctx, func(ctx context.Context) (*result.Result, error) {
		return r.succeed(ctx, last.Entries)
	})
}

// underLock takes the unit's lock and, if the inventory is still the one
// the run read, writes with it; done is false when the inventory moved.
// A lock that cannot be had fails the run, as it would under the lock
// from the start, and nothing is recorded.
func (r *run) underLock(ctx context.Context, write func(context.Context) (*result.Result, error)) (*result.Result, bool, error) {
	held, release, err := r.lock(ctx)
	if err != nil {
		r.loaded = false // not ours to record in
		res, err := r.fail(ctx, err)
		return res, true, err
	}
	r.release = release
	now, err := r.cl.store.Load(held, r.ns, r.opts.Name)
	if err != nil {
		res, err := r.fail(held, failure(result.ReasonArtifactFailed, err)) // nothing recorded
		return res, true, err
	}
	if now == nil || now.ResourceVersion != r.last.ResourceVersion {
		return nil, false, nil
	}
	res, err := write(held)
	return res, true, err
}

// sameStatus reports whether writing st over last would record nothing
// new: the same fields but for when the Ready condition last changed and
// the health key.
func sameStatus(st, last *inventory.Status) bool {
	a, b := *st, *last
	a.Ready.LastTransitionTime = b.Ready.LastTransitionTime
	// Nor is a health key worth a write of its own: without it, the next
	// no-op waits as this one did; the next write records it.
	a.Health = b.Health
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// loadUnlocked reads the unit's inventory for applyUnlocked: as preloaded
// with every other unit's (Options.Preloaded), else on its own.
func (r *run) loadUnlocked(ctx context.Context) (*inventory.Inventory, error) {
	if r.opts.Preloaded != nil {
		if inv, ok := r.opts.Preloaded(r.ns, r.opts.Name); ok {
			return inv, nil
		}
	}
	return r.cl.store.Load(ctx, r.ns, r.opts.Name)
}

// prebuilt is a unit's rendering made without the lock, and the options
// it was made with.
type prebuilt struct {
	rendered *Rendered
	opts     Options
}

// chartsUnchangedUnlocked renders a unit with Helm releases without the
// lock, and reports, as the run under the lock would
// (chartsUnchangedSinceLastApply), whether it is unchanged since the last
// apply. Its rendering is kept (r.prebuilt) for the run under the lock,
// which takes it instead of rendering the charts again.
func (r *run) chartsUnchangedUnlocked(ctx context.Context, subs substitutions) ([]result.Entry, bool) {
	render := r.render
	r.render = func(ctx context.Context, o Options) (*Rendered, error) {
		rendered, err := render(ctx, o)
		if err == nil {
			// A copy, as rendered: the build goes on to change it.
			r.prebuilt = &prebuilt{rendered: copyRendered(rendered), opts: o}
		}
		return rendered, err
	}
	d, err := r.build(ctx, subs)
	r.render = render
	if err != nil {
		return nil, false // the run under the lock fails as it would have
	}
	r.releases = append(releasesOf(d.Charts), r.heldRecords...)
	r.res.Releases = resultReleases(d.Charts, d.targets)
	r.chartHealth = d.Health
	return r.chartsUnchangedSinceLastApply(ctx, d)
}

// sameValues says whether a and b substitute the same values.
func sameValues(a, b Options) bool {
	return maps.Equal(a.Substitute, b.Substitute) && slices.Equal(a.SubstituteSecret, b.SubstituteSecret) &&
		a.SubstitutePublic == b.SubstitutePublic && a.Namespace == b.Namespace
}

// copyRendered is a copy of r whose objects, sources, secret fields and
// charts a build may change without changing r's.
func copyRendered(r *Rendered) *Rendered {
	c := *r
	saved := cloneRendered(r)
	c.Objects, c.Sources, c.SecretFields = saved.Objects, saved.Sources, saved.SecretFields
	c.Charts, c.LeftOut, c.Notes = slices.Clone(r.Charts), slices.Clone(r.LeftOut), slices.Clone(r.Notes)
	return &c
}
