package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/lock"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

var (
	monday  = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	tuesday = monday.Add(24 * time.Hour)
)

// Suspended, pinned and out-of-order units are skipped on purpose: nothing
// is built or written, the result keeps the unit's last Ready state.
func TestSkippedOnPurpose(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   result.Mode
		status func(st *inventory.Status)
		opts   func(o *Options)
		reason result.Reason // "" when the run goes on
		msg    string
	}{
		{name: "suspended by the command", mode: result.ModeApply, status: func(st *inventory.Status) { st.Suspended = true },
			reason: result.ReasonSuspended, msg: "suspended: not run until resumed"},
		{name: "suspended in a diff too", mode: result.ModeDiff, status: func(st *inventory.Status) { st.Suspended = true },
			reason: result.ReasonSuspended},
		{name: "suspended in the spec", mode: result.ModeApply, opts: func(o *Options) { o.Suspend = true },
			reason: result.ReasonSuspended, msg: "spec.suspend"},
		{name: "pinned to another revision", mode: result.ModeApply, status: func(st *inventory.Status) { st.Pinned = "rev-1" },
			reason: result.ReasonPinned, msg: "pinned to revision rev-1: revision rev-2 is not applied"},
		{name: "pinned to this revision", mode: result.ModeApply, status: func(st *inventory.Status) { st.Pinned = "rev-2" }},
		{name: "an older commit than the applied one", mode: result.ModeApply,
			status: func(st *inventory.Status) { st.LastAppliedRevisionTime = &tuesday },
			opts:   func(o *Options) { o.RevisionTime = monday },
			reason: result.ReasonOutOfOrder, msg: "revision rev-2 (committed 2026-11-23T09:00:00Z) is older than the applied revision rev-1 (committed 2026-11-24T09:00:00Z)"},
		{name: "an older commit, rollback allowed", mode: result.ModeApply,
			status: func(st *inventory.Status) { st.LastAppliedRevisionTime = &tuesday },
			opts:   func(o *Options) { o.RevisionTime, o.AllowRollback = monday, true }},
		{name: "an older commit in a diff", mode: result.ModeDiff,
			status: func(st *inventory.Status) { st.LastAppliedRevisionTime = &tuesday },
			opts:   func(o *Options) { o.RevisionTime = monday }},
		{name: "a newer commit", mode: result.ModeApply,
			status: func(st *inventory.Status) { st.LastAppliedRevisionTime = &monday },
			opts:   func(o *Options) { o.RevisionTime = tuesday }},
		{name: "an unknown commit time", mode: result.ModeApply,
			status: func(st *inventory.Status) { st.LastAppliedRevisionTime = &tuesday }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := lastRun(cmA)
			if tc.status != nil {
				tc.status(&last.Status)
			}
			f := newFixture(t, last, cmA)
			opts := DefaultOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			res, err := f.run(tc.mode, opts)
			if tc.reason == "" {
				if err != nil || f.rendered == 0 {
					t.Fatalf("the run did not go on: %s %v", res.Reason, err)
				}
				return
			}
			if err != nil || res.Reason != tc.reason || !strings.Contains(res.Message, tc.msg) || !res.Ready || res.Failed() {
				t.Errorf("result %s %q ready %v err %v; want %s containing %q, ready as the last run", res.Reason, res.Message, res.Ready, err, tc.reason, tc.msg)
			}
			if f.rendered != 0 || len(f.store.writes) != 0 {
				t.Errorf("a skipped unit was built (%d) or written (%d)", f.rendered, len(f.store.writes))
			}
		})
	}
}

// Writing runs hold the unit's lock; a diff does not take it.
func TestLockIsHeldByWritingRuns(t *testing.T) {
	for _, mode := range []result.Mode{result.ModeApply, result.ModeDelete, result.ModeDiff} {
		f := newFixture(t, lastRun(cmA), cmA)
		if _, err := f.run(mode, DefaultOptions()); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		want := 1
		if !mode.Writes() {
			want = 0
		}
		if f.locker.taken != want || f.locker.release != want {
			t.Errorf("%s: lock taken %d, released %d; want %d", mode, f.locker.taken, f.locker.release, want)
		}
	}
}

// A lock held by another run too long ends the run before anything is
// read or written, with LockTimeout; a lock that could not be asked for
// (the cluster did not answer) is no LockTimeout.
func TestLockTimeoutWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		err    error
		reason result.Reason
		says   string
	}{
		{&lock.HeldError{Unit: "web", Namespace: "ns", Holder: "run-1", Waited: time.Minute}, result.ReasonLocked, "held by run-1"},
		{errors.New("taking the lock of unit web (Lease ns/kustomize-deploy.web): connection refused"), result.ReasonArtifactFailed, "connection refused"},
	} {
		f := newFixture(t, lastRun(cmA), cmA)
		f.locker.err = tc.err
		res, err := f.run(result.ModeApply, DefaultOptions())
		if err == nil || res.Reason != tc.reason || !strings.Contains(res.Message, tc.says) || len(f.store.writes) != 0 || f.rendered != 0 {
			t.Errorf("reason %s %q, writes %d, built %d; want %s", res.Reason, res.Message, len(f.store.writes), f.rendered, tc.reason)
		}
	}
}

// A lost lock ends the run, saying so.
func TestLostLockEndsTheRun(t *testing.T) {
	f := newFixture(t, lastRun(cmA), cmA)
	f.locker.lose = errors.New("lost the lock of unit web: another run holds it now")
	f.waiter.err = errors.New("context canceled")
	opts := DefaultOptions()
	opts.HealthChecks = []object.ID{{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "web"}}
	res, err := f.run(result.ModeApply, opts)
	if err == nil || !strings.Contains(res.Message, "lost the lock") {
		t.Fatalf("result %s %q", res.Reason, res.Message)
	}
}
