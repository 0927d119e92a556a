package pipeline

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/lock"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// An apply with nothing to do goes without the unit's lock as long as it
// only reads: it takes the lock only to record a new status, and starts
// over under the lock whenever it would have to build, or the inventory
// moved since it read it.
func TestApplyTakesTheLockOnlyToWrite(t *testing.T) {
	cases := []struct {
		name string
		// sameRevision: the inventory records rev-2, this run's revision,
		// as a no-op at rev-2 before this one left it.
		sameRevision bool
		// moved: an object of the last apply changed in the cluster.
		moved bool
		// unhealthy: the wait for health fails.
		unhealthy bool
		// raced: another run writes the inventory while this one waits
		// for the lock.
		raced bool
		// held: another run holds the lock until this one gives up.
		held bool

		reason              result.Reason
		locks, writes, asks int // locks taken, inventory writes, Unmoved asked
		built               bool
		lastApplied         string
	}{
		{name: "no-op at the recorded revision: nothing taken, nothing written", sameRevision: true,
			reason: result.ReasonApplySucceed, locks: 0, writes: 0, asks: 1, lastApplied: "rev-2"},
		{name: "no-op at a new revision: the lock to record it",
			reason: result.ReasonApplySucceed, locks: 1, writes: 1, asks: 1, lastApplied: "rev-2"},
		// Asked twice: once without the lock, once by validation; not a
		// third time by the run under the lock.
		{name: "objects moved: built under the lock, not checked again", sameRevision: true, moved: true,
			reason: result.ReasonApplySucceed, locks: 1, writes: 3, asks: 2, built: true, lastApplied: "rev-2"},
		{name: "unhealthy: the failure recorded under the lock, waited for once", sameRevision: true, unhealthy: true,
			reason: result.ReasonHealthCheckFailed, locks: 1, writes: 1, asks: 1, lastApplied: "rev-2"},
		{name: "inventory moved while waiting for the lock: started over under it",
			raced: true, reason: result.ReasonApplySucceed, locks: 2, writes: 1, asks: 2, lastApplied: "rev-2"},
		{name: "lock held by another run: Locked, nothing written",
			held: true, reason: result.ReasonLocked, locks: 0, writes: 0, asks: 1, lastApplied: "rev-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			last := lastRunUntouched(cmA, cmB)
			last.Inputs = reusableInputs(t)
			last.ResourceVersion = "7"
			f := newFixture(t, last, cmA, cmB)
			f.applier.unmoved = map[object.ID]string{object.IDOf(cmA): "rv-a", object.IDOf(cmB): "rv-b"}
			opts := DefaultOptions()
			opts.HealthChecks = []object.ID{{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "web"}}
			if tc.sameRevision {
				if _, err := f.run(result.ModeApply, opts); err != nil {
					t.Fatal(err)
				}
				f.locker.taken, f.locker.release, f.store.writes, f.applier.unmovedAsked = 0, 0, nil, 0
			}
			if tc.moved {
				f.applier.unmoved[object.IDOf(cmA)] = "rv-changed"
			}
			if tc.unhealthy {
				f.waiter.err = errBoom
			}
			if tc.raced {
				f.locker.onLock = func() {
					if len(f.store.writes) == 0 { // the first lock only
						inv := *f.store.current("web")
						if _, err := f.store.Save(t.Context(), &inv); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if tc.held {
				f.locker.err = &lock.HeldError{Unit: "web", Namespace: "deploy", Holder: "other"}
			}
			waits := &callLog{}
			f.waiter.log = waits
			writesBefore := len(f.store.writes)
			res, err := f.run(result.ModeApply, opts)
			if res.Reason != tc.reason {
				t.Fatalf("reason %s (%s, err %v), want %s", res.Reason, res.Message, err, tc.reason)
			}
			if (err == nil) != res.Ready {
				t.Errorf("err %v with Ready %t", err, res.Ready)
			}
			writes := len(f.store.writes) - writesBefore
			if tc.raced {
				writes-- // the other run's
			}
			got := []int{f.locker.taken, writes, f.applier.unmovedAsked}
			if diff := cmp.Diff([]int{tc.locks, tc.writes, tc.asks}, got); diff != "" {
				t.Errorf("locks taken, inventory writes, Unmoved asked (-want +got):\n%s", diff)
			}
			if f.locker.taken != f.locker.release {
				t.Errorf("%d lock(s) taken, %d given back", f.locker.taken, f.locker.release)
			}
			if built := f.rendered > 0; built != tc.built {
				t.Errorf("built %t, want %t", built, tc.built)
			}
			inv := f.store.current("web")
			if inv.Status.LastAppliedRevision != tc.lastApplied {
				t.Errorf("last applied revision %q, want %q", inv.Status.LastAppliedRevision, tc.lastApplied)
			}
			if tc.unhealthy && inv.Status.Ready.Reason != result.ReasonHealthCheckFailed {
				t.Errorf("recorded %s, want HealthCheckFailed", inv.Status.Ready.Reason)
			}
			want := 1 // the run that started over waits again
			if tc.raced {
				want = 2
			}
			if n := len(waits.calls); n != want {
				t.Errorf("waited %d times, want %d", n, want)
			}
			if tc.held && !errors.As(err, new(*lock.HeldError)) {
				t.Errorf("err %v, want the lock's", err)
			}
			if !tc.moved && !tc.unhealthy && !tc.held {
				if diff := cmp.Diff([]string{"unchanged ConfigMap/apps/a", "unchanged ConfigMap/apps/b"}, actions(res.Entries)); diff != "" {
					t.Errorf("entries (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// Only the time of the last transition may differ for a status to count
// as the same.
func TestSameStatus(t *testing.T) {
	base := inventory.Status{LastAppliedRevision: "r", Ready: inventory.Condition{Status: "True", Reason: result.ReasonApplySucceed, Message: "applied revision r"}}
	later := base
	later.Ready.LastTransitionTime = appliedAt
	other := base
	other.LastAppliedRevision = "s"
	msg := base
	msg.Ready.Message = "x"
	for _, tc := range []struct {
		name string
		a, b inventory.Status
		want bool
	}{
		{"identical", base, base, true},
		{"transition time only", base, later, true},
		{"revision", base, other, false},
		{"message", base, msg, false},
	} {
		if got := sameStatus(&tc.a, &tc.b); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.name, got, tc.want)
		}
	}
}

// A unit of no objects (a Flux Kustomization whose build only emits other
// Kustomizations, say) with unchanged inputs is reused like any other:
// not built, nothing written at the revision it recorded.
func TestEmptyUnitIsReused(t *testing.T) {
	last := lastRun()
	last.Inputs = reusableInputs(t)
	last.Status.LastAppliedRevision, last.Status.LastAttemptedRevision = "rev-2", "rev-2"
	last.Status.Ready.Message = "applied revision rev-2"
	f := newFixture(t, last)
	res, err := f.run(result.ModeApply, DefaultOptions())
	if err != nil || res.Reason != result.ReasonApplySucceed {
		t.Fatalf("%v %s", err, res.Reason)
	}
	if f.rendered != 0 || len(f.store.writes) != 0 || f.locker.taken != 0 {
		t.Errorf("built %d times, wrote %d inventories, took the lock %d times", f.rendered, len(f.store.writes), f.locker.taken)
	}
}

// An inventory that cannot be read fails the run at once: the client
// already asked as often as it asks, and the run under the lock would
// only ask again. Nothing is locked or written.
func TestUnreadableInventoryIsReadOnce(t *testing.T) {
	f := newFixture(t, lastRun(cmA), cmA)
	f.store.loadErr = errBoom
	res, err := f.run(result.ModeApply, DefaultOptions())
	if err == nil || res.Reason != result.ReasonArtifactFailed {
		t.Fatalf("%v %s, want ArtifactFailed", err, res.Reason)
	}
	if f.store.loads != 1 || f.locker.taken != 0 || len(f.store.writes) != 0 {
		t.Errorf("read %d times, locked %d times, wrote %d inventories; want 1, 0, 0", f.store.loads, f.locker.taken, len(f.store.writes))
	}
}

// A no-op does not wait again for objects the last apply found ready,
// untouched since (their resourceVersions, which their status is part
// of, are the ones recorded), when it waits for the same things: every
// other case waits as Flux does on every reconcile.
func TestUnmovedObjectsAreNotWaitedForAgain(t *testing.T) {
	web := object.ID{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "web"}
	a, b := object.IDOf(cmA), object.IDOf(cmB)
	cases := []struct {
		name string
		// first and then are the health checks of the apply that
		// recorded the inventory and of the no-op after it.
		first, then []object.ID
		exprs       bool // the unit judges ConfigMaps with health expressions
		unrecorded  bool // the inventory predates health keys
		moved       bool // an object changed in the cluster since
		want        []object.ID
	}{
		{name: "the same checks, found ready, untouched: none waited for", first: []object.ID{a}, then: []object.ID{a}},
		{name: "a check outside the unit is waited for", first: []object.ID{a, web}, then: []object.ID{a, web}, want: []object.ID{web}},
		{name: "checks added since: all waited for", first: []object.ID{a}, then: []object.ID{a, b}, want: []object.ID{a, b}},
		{name: "no health key recorded: all waited for", first: []object.ID{a}, then: []object.ID{a}, unrecorded: true, want: []object.ID{a}},
		{name: "health expressions: always waited for", first: []object.ID{a}, then: []object.ID{a}, exprs: true, want: []object.ID{a, b, a}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			last := lastRunUntouched(cmA, cmB)
			last.Inputs = reusableInputs(t)
			f := newFixture(t, last, cmA, cmB)
			f.applier.unmoved = map[object.ID]string{a: "rv-a", b: "rv-b"}
			opts := DefaultOptions()
			opts.HealthChecks = tc.first
			if tc.exprs {
				evs, err := health.ParseExpressions([]health.Expressions{{APIVersion: "v1", Kind: "ConfigMap", Current: "true"}})
				if err != nil {
					t.Fatal(err)
				}
				opts.HealthExprs = evs
			}
			if _, err := f.run(result.ModeApply, opts); err != nil {
				t.Fatal(err)
			}
			if tc.unrecorded {
				inv := *f.store.current("web")
				inv.Status.Health = ""
				if _, err := f.store.Save(t.Context(), &inv); err != nil {
					t.Fatal(err)
				}
			}
			f.waiter.called, f.waiter.waited = false, nil
			opts.HealthChecks = tc.then
			res, err := f.run(result.ModeApply, opts)
			if err != nil || res.Reason != result.ReasonApplySucceed {
				t.Fatalf("reason %s, err %v", res.Reason, err)
			}
			if f.waiter.called != (len(tc.want) > 0) {
				t.Errorf("waited %t, want %t", f.waiter.called, len(tc.want) > 0)
			}
			if diff := cmp.Diff(tc.want, f.waiter.waited); diff != "" {
				t.Errorf("waited for (-want +got):\n%s", diff)
			}
			if f.rendered > 0 {
				t.Error("the no-op built the unit")
			}
		})
	}
}

// A unit with Helm releases is rendered without the lock too: unchanged
// since its last apply (inputs, every chart and values, every object),
// it writes nothing; else the run under the lock takes that rendering
// instead of rendering again.
func TestChartUnitGoesWithoutTheLockWhileItOnlyReads(t *testing.T) {
	chart := helm.Chart{Release: helm.Reference{Kind: "HelmRelease", Namespace: "apps", Name: "web"}, ReleaseName: "web", Namespace: "apps",
		Source: "release.yaml", Objects: []object.ID{object.IDOf(cmA)}, ConfigDigest: "sha256:new"}
	for _, tc := range []struct {
		name          string
		recorded      string // the chart and values' digest the inventory records
		locks, writes int
		applied       bool
	}{
		{name: "unchanged: nothing taken, nothing written", recorded: "sha256:new"},
		{name: "values changed: applied under the lock, rendered once", recorded: "sha256:old", locks: 1, writes: 3, applied: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := lastRunUntouched(cmA)
			last.Inputs = reusableInputs(t)
			last.Status.Releases = []inventory.Release{{Name: "apps/web", Digest: tc.recorded}}
			last.Status.LastAppliedRevision, last.Status.LastAttemptedRevision = "rev-2", "rev-2"
			last.Status.Ready.Message = "applied revision rev-2"
			f := newFixture(t, last, cmA)
			f.charts = []helm.Chart{chart}
			f.inputs = &build.Inputs{Files: last.Inputs.Files, Complete: true}
			f.applier.unmoved = map[object.ID]string{object.IDOf(cmA): "rv-a"}
			res, err := f.run(result.ModeApply, DefaultOptions())
			if err != nil || res.Reason != result.ReasonApplySucceed {
				t.Fatalf("reason %s (%s), err %v", res.Reason, res.Message, err)
			}
			if got := []int{f.locker.taken, len(f.store.writes), f.rendered}; !slices.Equal(got, []int{tc.locks, tc.writes, 1}) {
				t.Errorf("locks taken, inventory writes, renderings %v, want %v", got, []int{tc.locks, tc.writes, 1})
			}
			if applied := f.applier.executed != nil; applied != tc.applied {
				t.Errorf("applied %t, want %t", applied, tc.applied)
			}
		})
	}
}
