package pipeline

import (
	"context"
	"encoding/json"

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
	last, err := r.cl.store.Load(ctx, r.ns, r.opts.Name)
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
	if !ok {
		return nil, false, nil
	}
	r.report(unchanged)
	if ids := r.waitFor(unchanged, nil); len(ids) > 0 {
		if err := r.wait(ctx, ids); err != nil {
			return r.underLock(ctx, func(ctx context.Context) (*result.Result, error) {
				return r.fail(ctx, err)
			})
		}
	}
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
// new: the same fields but for when the Ready condition last changed.
func sameStatus(st, last *inventory.Status) bool {
	a, b := *st, *last
	a.Ready.LastTransitionTime = b.Ready.LastTransitionTime
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
