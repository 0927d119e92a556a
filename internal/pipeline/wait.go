package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// waitAndSucceed waits, if asked to, for what the run applied (the
// entries applied reports, in the state as says) and for the
// health checks to become ready, runs the post-install (or post-upgrade)
// hooks of the releases in pending, removes the records of the Helm
// releases taken over when asked to, and ends the run: entries, with the
// versions objects settled at, become the inventory.
func (r *run) waitAndSucceed(ctx context.Context, entries []inventory.Entry, applied []result.Entry, as appliedState, pending []releaseHooks, charts []helm.Chart) (*result.Result, error) {
	entries, err := r.waitAndFinish(ctx, entries, applied, as, pending, charts)
	if err != nil {
		return r.fail(ctx, err)
	}
	return r.succeed(ctx, entries)
}

// waitAndFinish is waitAndSucceed but for its end: the entries that
// become the inventory, or the failure; the tests of the releases in
// pending whose HelmRelease enables them run after their post hooks.
func (r *run) waitAndFinish(ctx context.Context, entries []inventory.Entry, applied []result.Entry, as appliedState, pending []releaseHooks, charts []helm.Chart) ([]inventory.Entry, error) {
	if ids := r.waitFor(applied, as.current); len(ids) > 0 {
		seen, err := r.wait(ctx, ids)
		if err != nil {
			return nil, err
		}
		entries = r.settle(ctx, entries, seen, as.at)
	}
	r.healthy = r.healthKey()
	ran, err := r.runHooks(ctx, pending, true)
	r.report(ran)
	if err != nil {
		return nil, err
	}
	ran, err = r.runTests(ctx, pending)
	r.report(ran)
	if err != nil {
		return nil, err
	}
	if err := r.removeHelmRecords(ctx, applied, charts); err != nil {
		return nil, err
	}
	return entries, nil
}

// wait waits for ids to become ready, within the unit's timeout, and
// returns the resourceVersion at which each was found ready.
func (r *run) wait(ctx context.Context, ids []object.ID) (health.Observed, error) {
	r.progress("waiting up to %s for %d object(s) to become ready", r.opts.Timeout, len(ids))
	seen, err := r.cl.waiter.Wait(ctx, ids, r.healthOptions())
	if err != nil {
		return nil, failure(result.ReasonHealthCheckFailed, err)
	}
	return seen, nil
}

// healthOptions are how the run waits: within the unit's timeout, its
// own health expressions and its HelmReleases' judging their kinds.
func (r *run) healthOptions() health.Options {
	return health.Options{Timeout: r.opts.Timeout, Progress: r.opts.Progress, Evaluators: r.opts.HealthExprs.Merge(r.chartHealth)}
}

// waitedFor says whether waiting for id, just applied, can tell
// anything: not for the kinds kstatus calls ready as soon as they
// exist, unless a health expression judges them.
func (r *run) waitedFor(id object.ID) bool {
	return !health.ReadyOnceApplied(id) || r.judged(id)
}

// judged says whether a health expression judges id's kind.
func (r *run) judged(id object.ID) bool {
	return r.healthOptions().Evaluators.Judges(schema.GroupKind{Group: id.Group, Kind: id.Kind})
}

// waitFor are the objects to wait for: with Wait, everything applied,
// not what ssa: Ignore (or IfNotPresent on a missing object) skipped, nor
// the kinds kstatus calls ready as soon as they exist (they were just
// applied), so a unit of thousands of ConfigMaps does not list them all on
// every poll, nor those the apply's answer showed ready for good (current;
// a Namespace, a Service) unless a health expression judges their kind;
// then the health checks.
//
// An object of the last apply untouched since (see unmovedHealthy) is
// not waited for: its resourceVersion is the one recorded when that
// apply found it ready under the same health checks, and its status is
// part of it, so kstatus would judge it as it did then.
func (r *run) waitFor(applied []result.Entry, current map[object.ID]bool) []object.ID {
	var out []object.ID
	if r.opts.Wait {
		for _, e := range applied {
			if current[e.Object] && !r.judged(e.Object) {
				continue
			}
			if e.Action != result.Skipped && r.waitedFor(e.Object) && !r.knownHealthy(e.Object) {
				out = append(out, e.Object)
			}
		}
	}
	for _, id := range r.opts.HealthChecks {
		if !r.knownHealthy(id) {
			out = append(out, id)
		}
	}
	return out
}

// knownHealthy says whether id is an object of the last apply, untouched
// since, that the last apply found ready under the run's health checks.
func (r *run) knownHealthy(id object.ID) bool {
	return r.unmovedHealthy[id]
}

// healthKey names what the run waits for: wait, and spec.healthChecks.
// "" when health expressions judge objects (a changed expression is not
// told by the key), for which waiting is never skipped.
func (r *run) healthKey() string {
	if len(r.opts.HealthExprs) > 0 || len(r.chartHealth) > 0 {
		return ""
	}
	key, err := json.Marshal(struct {
		Wait   bool
		Checks []object.ID
	}{r.opts.Wait, r.opts.HealthChecks})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:8])
}

// settle returns entries with, for the objects this run applied (at the
// times at says) and then found ready at the versions seen says, the
// resourceVersion they reached by reporting status only (a rollout), so
// the next run need not dry-run them nor wait for them (see
// apply.Settled). Only the version the wait judged ready is recorded:
// an object that moved again between the wait and the read (a rollout
// that went wrong meanwhile) keeps the version of the apply, and the next
// run looks at it again. Entries it cannot settle keep the version of the
// apply.
func (r *run) settle(ctx context.Context, entries []inventory.Entry, seen health.Observed, at map[object.ID]time.Time) []inventory.Entry {
	if len(at) == 0 {
		return entries
	}
	var applied []apply.Applied
	for _, e := range entries {
		t, ok := at[e.ID]
		if rv := seen[e.ID]; ok && rv != "" && e.ResourceVersion != "" {
			applied = append(applied, apply.Applied{Recorded: apply.Recorded{ID: e.ID, APIVersion: e.Version, ResourceVersion: e.ResourceVersion}, At: t, Ready: rv})
		}
	}
	if len(applied) == 0 {
		return entries
	}
	settled, err := r.cl.applier.Settled(ctx, applied)
	if err != nil || len(settled) == 0 {
		return entries // they are dry-run next time, as without this
	}
	out := make([]inventory.Entry, len(entries))
	for i, e := range entries {
		if rv, ok := settled[e.ID]; ok {
			e.ResourceVersion = rv
		}
		out[i] = e
	}
	return out
}
