package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

var (
	cmA = configMap("a")
	cmB = configMap("b")
	cmC = configMap("c")
)

// What the inventory holds after each way an apply can end: it always
// lists every object of the unit that may exist, and never loses an
// object it could not prove gone.
func TestApplyInventoryRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fixture, o *Options)
		// want: the run's reason, the inventory's entries and reason
		// afterwards (nil: no inventory), whether anything was applied.
		reason       result.Reason
		inventory    []string
		invReason    result.Reason
		applied      bool
		lastApplied  string
		writes       int
		wantProgress string
	}{
		{name: "success: the new set, Ready",
			reason: result.ReasonApplySucceed, inventory: []string{"a", "c"}, invReason: result.ReasonApplySucceed, applied: true, lastApplied: "rev-2", writes: 3},
		{name: "the build fails: nothing applied, the old set stays",
			setup:  func(f *fixture, _ *Options) { f.renderErr = errBoom },
			reason: result.ReasonBuildFailed, inventory: []string{"a", "b"}, invReason: result.ReasonBuildFailed, lastApplied: "rev-1", writes: 1},
		{name: "the dry-run fails: nothing applied, the old set stays",
			setup:  func(f *fixture, _ *Options) { f.applier.dryRunErr = errBoom },
			reason: result.ReasonValidationFailed, inventory: []string{"a", "b"}, invReason: result.ReasonValidationFailed, lastApplied: "rev-1", writes: 1},
		{name: "the dry-run fails without server validation: ApplyFailed, nothing applied",
			setup:  func(f *fixture, o *Options) { f.applier.dryRunErr, o.Validation = errBoom, result.ValidationNone },
			reason: result.ReasonApplyFailed, inventory: []string{"a", "b"}, invReason: result.ReasonApplyFailed, lastApplied: "rev-1", writes: 1},
		{name: "recording the union fails: nothing applied",
			setup:  func(f *fixture, _ *Options) { f.store.saveErr, f.store.saveErrAt = errBoom, 1 },
			reason: result.ReasonApplyFailed, inventory: []string{"a", "b"}, invReason: result.ReasonApplyFailed, lastApplied: "rev-1", writes: 1},
		{name: "the apply fails: the union stays owned",
			setup:  func(f *fixture, _ *Options) { f.applier.executeErr = errBoom },
			reason: result.ReasonApplyFailed, inventory: []string{"a", "b", "c"}, invReason: result.ReasonApplyFailed, lastApplied: "rev-1", writes: 2},
		{name: "a delete fails: what was not deleted stays",
			setup:  func(f *fixture, _ *Options) { f.pruner.fail = map[object.ID]bool{object.IDOf(cmB): true} },
			reason: result.ReasonPruneFailed, inventory: []string{"a", "c", "b"}, invReason: result.ReasonPruneFailed, applied: true, lastApplied: "rev-1", writes: 3},
		{name: "prune is interrupted: what it did not reach stays",
			setup: func(f *fixture, _ *Options) {
				f.pruner.keep, f.pruner.err = map[object.ID]bool{object.IDOf(cmB): true}, errBoom
			},
			reason: result.ReasonPruneFailed, inventory: []string{"a", "c", "b"}, invReason: result.ReasonPruneFailed, applied: true, lastApplied: "rev-1", writes: 3},
		{name: "a Namespace in use is kept, and the run succeeds",
			setup:  func(f *fixture, _ *Options) { f.pruner.keep = map[object.ID]bool{object.IDOf(cmB): true} },
			reason: result.ReasonApplySucceed, inventory: []string{"a", "c", "b"}, invReason: result.ReasonApplySucceed, applied: true, lastApplied: "rev-2", writes: 3},
		{name: "a prune over the budget: refused before anything is written",
			setup:  func(_ *fixture, o *Options) { o.PruneBudget = prune.Budget{Protect: []string{"ConfigMap"}} },
			reason: result.ReasonPruneFailed, inventory: []string{"a", "b"}, invReason: result.ReasonPruneFailed, lastApplied: "rev-1", writes: 1},
		{name: "a prune over the budget, allowed",
			setup: func(_ *fixture, o *Options) {
				o.PruneBudget = prune.Budget{Max: 0, Protect: []string{"ConfigMap"}, Allow: true}
			},
			reason: result.ReasonApplySucceed, inventory: []string{"a", "c"}, invReason: result.ReasonApplySucceed, applied: true, lastApplied: "rev-2", writes: 3},
		{name: "prune off: what left the build stays owned",
			setup:  func(_ *fixture, o *Options) { o.Prune = false },
			reason: result.ReasonApplySucceed, inventory: []string{"a", "b", "c"}, invReason: result.ReasonApplySucceed, applied: true, lastApplied: "rev-2", writes: 3},
		{name: "the health check fails: the new set, not Ready",
			setup: func(f *fixture, o *Options) {
				f.waiter.err = errBoom
				o.HealthChecks = []object.ID{{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "web"}}
			},
			reason: result.ReasonHealthCheckFailed, inventory: []string{"a", "c"}, invReason: result.ReasonHealthCheckFailed, applied: true, lastApplied: "rev-1", writes: 3},
		{name: "a dependency is not ready: nothing built",
			setup: func(f *fixture, o *Options) {
				o.DependsOn = []string{"db"}
				db := lastRun()
				db.Name, db.Status.Ready = "db", inventory.Condition{Status: "False", Reason: result.ReasonHealthCheckFailed, Message: "timeout"}
				f.store.invs["deploy/db"] = db
			},
			reason: result.ReasonDependencyNotReady, inventory: []string{"a", "b"}, invReason: result.ReasonDependencyNotReady, lastApplied: "rev-1", writes: 1},
		{name: "an unreadable inventory is never overwritten",
			setup:  func(f *fixture, _ *Options) { f.store.loadErr = errBoom },
			reason: result.ReasonArtifactFailed, inventory: []string{"a", "b"}, invReason: result.ReasonApplySucceed, lastApplied: "rev-1", writes: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, lastRun(cmA, cmB), cmA, cmC)
			opts := DefaultOptions()
			if tc.setup != nil {
				tc.setup(f, &opts)
			}
			res, err := f.run(result.ModeApply, opts)
			if res.Reason != tc.reason || res.Ready != (err == nil) || res.Ready != (tc.reason == result.ReasonApplySucceed) {
				t.Fatalf("reason %s, ready %v, err %v; want %s", res.Reason, res.Ready, err, tc.reason)
			}
			inv := f.store.current("web")
			if got := names(inv.Entries); !slices.Equal(got, tc.inventory) {
				t.Errorf("inventory holds %v, want %v", got, tc.inventory)
			}
			if inv.Status.Ready.Reason != tc.invReason || inv.Status.LastAppliedRevision != tc.lastApplied {
				t.Errorf("inventory status %s, last applied %s; want %s, %s", inv.Status.Ready.Reason, inv.Status.LastAppliedRevision, tc.invReason, tc.lastApplied)
			}
			if len(f.store.writes) != tc.writes {
				t.Errorf("%d inventory writes, want %d", len(f.store.writes), tc.writes)
			}
			if applied := len(f.applier.executed) > 0; applied != tc.applied {
				t.Errorf("applied: %v, want %v", applied, tc.applied)
			}
			// Whatever the outcome, the inventory held every object that
			// could exist when the apply started.
			if at := f.applier.atExecute; at != nil {
				if got := names(at.Entries); !slices.Equal(got, []string{"a", "b", "c"}) || at.Status.Ready.Status != "Unknown" {
					t.Errorf("when the apply started the inventory held %v (%s), want the union a, b, c (Progressing)", got, at.Status.Ready.Reason)
				}
			}
		})
	}
}

// Validation happens before anything is written; a failed offline check
// does not even reach the dry-run.
func TestClientValidationFailureStopsBeforeTheDryRun(t *testing.T) {
	bad := configMap("bad")
	bad.Object["data"] = map[string]any{"port": int64(80)} // ConfigMap data must be strings
	f := newFixture(t, lastRun(cmA), cmA, bad)
	opts := DefaultOptions()
	opts.Validation = result.ValidationClient
	res, err := f.run(result.ModeApply, opts)
	if err == nil || res.Reason != result.ReasonValidationFailed || res.Validation != result.ValidationClient {
		t.Fatalf("reason %s, validation %s, err %v", res.Reason, res.Validation, err)
	}
	if len(f.applier.dryRun) != 0 || f.applier.executed != nil {
		t.Errorf("dry-run %v, executed %v after a failed validation", f.applier.dryRun, f.applier.executed)
	}
	if !strings.Contains(res.Message, "ConfigMap/apps/bad") || !strings.Contains(res.Message, "bad.yaml") {
		t.Errorf("the message does not name the object and its file: %s", res.Message)
	}
}

// An object of a kind the cluster does not serve, in a Namespace the
// unit creates, cannot be dry-run: the kind check stops the unit before
// anything is written, whatever the validation, naming the kind and the
// object's file. A kind that a CRD elsewhere in the configuration
// defines (KnownKinds) passes.
func TestUnservedKindWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name       string
		validation result.Validation
		known      []schema.GroupKind
		reason     result.Reason
	}{
		{name: "server validation", validation: result.ValidationServer, reason: result.ReasonValidationFailed},
		{name: "no validation", validation: result.ValidationNone, reason: result.ReasonValidationFailed},
		{name: "a kind another unit defines", validation: result.ValidationServer, reason: result.ReasonApplySucceed,
			known: []schema.GroupKind{{Group: "monitoring.example.com", Kind: "PodMonitor"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := obj("v1", "Namespace", "", "monitoring")
			monitor := obj("monitoring.example.com/v1", "PodMonitor", "monitoring", "web")
			f := newFixture(t, lastRun(cmA), cmA, ns, obj("v1", "ConfigMap", "monitoring", "rules"), monitor)
			opts := DefaultOptions()
			opts.Validation, opts.KnownKinds = tc.validation, tc.known
			res, err := f.run(result.ModeApply, opts)
			if res.Reason != tc.reason || (err == nil) != (tc.reason == result.ReasonApplySucceed) {
				t.Fatalf("reason %s, err %v; want %s", res.Reason, err, tc.reason)
			}
			if tc.reason == result.ReasonApplySucceed {
				return
			}
			if len(f.applier.dryRun) != 0 || f.applier.executed != nil || len(f.store.writes) != 1 {
				t.Errorf("dry-run %v, executed %v, %d inventory writes (want only the failure's)", f.applier.dryRun, f.applier.executed, len(f.store.writes))
			}
			if got := names(f.store.current("web").Entries); !slices.Equal(got, []string{"a"}) {
				t.Errorf("the inventory holds %v, want the last run's a", got)
			}
			contains := "PodMonitor/monitoring/web (web.yaml): kind PodMonitor (monitoring.example.com/v1) is not served by the cluster and no CRD of this unit defines it (is its CRD installed?)"
			if res.Message != contains {
				t.Errorf("message %q, want %q", res.Message, contains)
			}
			want := []result.Entry{{Object: object.IDOf(monitor), Version: "monitoring.example.com/v1", Source: "web.yaml", Stage: result.StageResources,
				Action: result.Failed, Reason: "kind PodMonitor (monitoring.example.com/v1) is not served by the cluster and no CRD of this unit defines it (is its CRD installed?)"}}
			if diff := cmp.Diff(want, res.Entries); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

// A run right after a delete meets the unit's namespace still being
// deleted: it waits for the namespace to be gone, then dry-runs again
// (the unit creates it anew); if the namespace outlives the wait, the
// run fails before anything is written, saying why.
func TestTerminatingNamespaceIsWaitedFor(t *testing.T) {
	inShop := obj("v1", "ConfigMap", "shop", "settings")
	refused := &apply.ObjectError{Object: object.IDOf(inShop), Err: apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "settings",
		errors.New("unable to create new content in namespace shop because it is being terminated"))}
	for _, tc := range []struct {
		name    string
		goneErr error
		reason  result.Reason
	}{
		{name: "the namespace goes", reason: result.ReasonApplySucceed},
		{name: "the namespace outlives the wait", goneErr: errors.New("after 5m0s, 1 object(s) are still terminating: Namespace/shop"), reason: result.ReasonValidationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil, obj("v1", "Namespace", "", "shop"), inShop)
			f.applier.firstDryRunErr, f.pruner.goneErr = refused, tc.goneErr
			res, err := f.run(result.ModeApply, DefaultOptions())
			if res.Reason != tc.reason {
				t.Fatalf("reason %s, err %v; want %s", res.Reason, err, tc.reason)
			}
			if diff := cmp.Diff([]object.ID{{Kind: "Namespace", Name: "shop"}}, f.pruner.gone); diff != "" {
				t.Errorf("waited for (-want +got):\n%s", diff)
			}
			if tc.goneErr == nil {
				if f.applier.dryRuns != 2 || f.applier.executed == nil {
					t.Errorf("%d dry-runs, executed %v; want 2 and the apply", f.applier.dryRuns, f.applier.executed)
				}
				return
			}
			if f.applier.executed != nil || !strings.Contains(res.Message, "being deleted") || !strings.Contains(res.Message, "still terminating: Namespace/shop") {
				t.Errorf("executed %v; message %q", f.applier.executed, res.Message)
			}
		})
	}
}

// A first run that fails before anything is applied leaves no inventory
// behind: the unit has nothing in the cluster to record.
func TestFirstRunFailureWritesNoInventory(t *testing.T) {
	f := newFixture(t, nil, cmA)
	f.renderErr = errBoom
	res, _ := f.run(result.ModeApply, DefaultOptions())
	if res.Reason != result.ReasonBuildFailed || f.store.current("web") != nil || len(f.store.writes) != 0 {
		t.Fatalf("reason %s, inventory %+v, %d writes", res.Reason, f.store.current("web"), len(f.store.writes))
	}
}

// A failure once the unit has an inventory records the attempt, the
// entries kept.
func TestFailureIsRecordedOnAnInventory(t *testing.T) {
	f := newFixture(t, lastRun(cmA), cmA)
	f.renderErr = errBoom
	res, _ := f.run(result.ModeApply, DefaultOptions())
	inv := f.store.current("web")
	if res.Reason != result.ReasonBuildFailed || inv == nil || len(inv.Entries) != 1 || inv.Status.Ready.Reason != result.ReasonBuildFailed {
		t.Fatalf("reason %s, inventory %+v", res.Reason, inv)
	}
}

// A diff runs the same steps and writes nothing; prune is asked only what
// it would delete.
func TestDiffWritesNothing(t *testing.T) {
	f := newFixture(t, lastRun(cmA, cmB), cmA, cmC)
	res, err := f.run(result.ModeDiff, DefaultOptions())
	if err != nil || res.Reason != result.ReasonDiffSucceed || res.Validation != result.ValidationServer {
		t.Fatalf("reason %s, validation %s, err %v", res.Reason, res.Validation, err)
	}
	if len(f.store.writes) != 0 || f.applier.executed != nil || f.waiter.called {
		t.Errorf("a diff wrote %d inventories, executed %v, waited %v", len(f.store.writes), f.applier.executed, f.waiter.called)
	}
	if len(f.pruner.calls) != 1 || !f.pruner.dryRun[0] || !slices.Equal(f.pruner.calls[0], []object.ID{object.IDOf(cmB)}) {
		t.Errorf("prune calls %v dry-run %v, want one dry run for b", f.pruner.calls, f.pruner.dryRun)
	}
	want := map[string]result.Action{"ConfigMap/apps/a": result.Created, "ConfigMap/apps/c": result.Created, "ConfigMap/apps/b": result.Deleted}
	for _, e := range res.Entries {
		if want[e.Object.String()] != e.Action {
			t.Errorf("%s: %s, want %s", e.Object, e.Action, want[e.Object.String()])
		}
	}
	if len(res.Entries) != len(want) {
		t.Errorf("entries %+v", res.Entries)
	}
}

// A diff reports a prune over the budget as a failure, with the whole
// plan and the prune it refuses, so that the pull request shows it.
func TestDiffReportsPruneOverBudget(t *testing.T) {
	f := newFixture(t, lastRun(cmA, cmB), cmA, cmC)
	opts := DefaultOptions()
	opts.PruneBudget = prune.Budget{Protect: []string{"ConfigMap"}}
	res, err := f.run(result.ModeDiff, opts)
	if err == nil || res.Reason != result.ReasonPruneFailed || len(res.Entries) != 3 || len(f.store.writes) != 0 {
		t.Fatalf("reason %s, entries %+v, writes %d, err %v", res.Reason, res.Entries, len(f.store.writes), err)
	}
	var f2 *Failure
	if !errors.As(err, &f2) || f2.Fix != FixForcePrune || !strings.Contains(res.Message, "ConfigMap/apps/b") {
		t.Errorf("failure %+v, message %s", f2, res.Message)
	}
}

// A failed dry-run in a diff still shows the whole predicted plan.
func TestDiffFailureShowsThePlan(t *testing.T) {
	f := newFixture(t, nil, cmA, cmB)
	f.applier.dryRunErr = errBoom
	res, err := f.run(result.ModeDiff, DefaultOptions())
	if err == nil || res.Reason != result.ReasonValidationFailed || len(res.Entries) != 2 || len(f.store.writes) != 0 {
		t.Fatalf("reason %s, entries %+v, writes %d", res.Reason, res.Entries, len(f.store.writes))
	}
}

// Objects untouched since the last run (same digest, same live
// resourceVersion) are neither dry-run nor applied, and keep their
// recorded version.
func TestUntouchedObjectsAreSkipped(t *testing.T) {
	last := lastRun()
	for _, u := range []*unstructured.Unstructured{cmA, cmB} {
		e := inventoryEntries([]*unstructured.Unstructured{withOwner(u)})[0]
		e.ResourceVersion = "rv-old-" + u.GetName()
		last.Entries = append(last.Entries, e)
	}
	f := newFixture(t, last, cmA, cmB)
	f.applier.unmoved = map[object.ID]string{object.IDOf(cmA): "rv-old-a", object.IDOf(cmB): "rv-moved"}
	if _, err := f.run(result.ModeApply, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.applier.dryRun, []object.ID{object.IDOf(cmB)}) {
		t.Errorf("dry-run %v, want only b (a is untouched)", f.applier.dryRun)
	}
	got := map[string]string{}
	for _, e := range f.store.current("web").Entries {
		got[e.Name] = e.ResourceVersion
	}
	if got["a"] != "rv-old-a" || got["b"] != "rv-b" {
		t.Errorf("recorded versions %v, want a at rv-old-a, b at rv-b", got)
	}
	if f.applier.executed == nil || slices.Contains(f.applier.executed, object.IDOf(cmA)) {
		t.Errorf("executed %v", f.applier.executed)
	}
}

// withOwner is u labelled as unit web's, as the run labels what it applies.
func withOwner(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	c.SetLabels(map[string]string{"kustomize-deploy.dev/name": "web", "kustomize-deploy.dev/namespace": "deploy"})
	return c
}

// The wait skips what is ready once applied (ConfigMaps) and what prune
// touched, adds the health checks, and the versions objects settled at
// after a rollout are recorded.
func TestWaitAndSettle(t *testing.T) {
	deploy := obj("apps/v1", "Deployment", "apps", "web")
	f := newFixture(t, lastRun(cmB), cmA, deploy)
	f.applier.settled = map[object.ID]string{object.IDOf(deploy): "rv-rolled-out"}
	f.waiter.observed = health.Observed{object.IDOf(deploy): "rv-rolled-out"}
	opts := DefaultOptions()
	hc := object.ID{Group: "apps", Kind: "StatefulSet", Namespace: "db", Name: "pg"}
	opts.HealthChecks = []object.ID{hc}
	if _, err := f.run(result.ModeApply, opts); err != nil {
		t.Fatal(err)
	}
	if want := []object.ID{object.IDOf(deploy), hc}; !slices.Equal(f.waiter.waited, want) {
		t.Errorf("waited for %v, want %v", f.waiter.waited, want)
	}
	got := map[string]string{}
	for _, e := range f.store.current("web").Entries {
		got[e.Name] = e.ResourceVersion
	}
	if got["web"] != "rv-rolled-out" || got["a"] != "rv-a" {
		t.Errorf("recorded versions %v", got)
	}
}

// An object that moved again between the wait that found it ready and
// the read that settles it (a rollout that went wrong meanwhile) keeps
// the version of its apply: the next run looks at it again instead of
// taking the new version for one found ready.
func TestSettleOnlyWhatTheWaitFoundReady(t *testing.T) {
	deploy := obj("apps/v1", "Deployment", "apps", "web")
	f := newFixture(t, nil, deploy)
	f.applier.settled = map[object.ID]string{object.IDOf(deploy): "rv-unavailable"}
	f.waiter.observed = health.Observed{object.IDOf(deploy): "rv-rolled-out"}
	if _, err := f.run(result.ModeApply, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	for _, e := range f.store.current("web").Entries {
		if e.Name == "web" && (e.ResourceVersion == "rv-unavailable" || e.ResourceVersion == "") {
			t.Errorf("recorded version %q, want the apply's", e.ResourceVersion)
		}
	}
}

// Objects of namespaced kinds that name no namespace go to the run's
// namespace (the kubeconfig context's, or -n); cluster-scoped kinds and
// kinds nobody knows are left alone.
func TestObjectsWithoutANamespace(t *testing.T) {
	crd := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com")
	crd.Object["spec"] = map[string]any{"group": "example.com", "scope": "Namespaced", "names": map[string]any{"kind": "Widget"},
		"versions": []any{map[string]any{"name": "v1", "served": true}}}
	f := newFixture(t, nil,
		obj("v1", "ConfigMap", "", "settings"),
		obj("v1", "Service", "elsewhere", "api"),
		obj("v1", "Namespace", "", "apps"),
		obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader"),
		obj("example.com/v1", "Widget", "", "w"),
		obj("unknown.example.com/v1", "Gadget", "", "g"),
		crd,
	)
	opts := DefaultOptions()
	// A kind another unit of the configuration defines: its scope is
	// not known yet.
	opts.KnownKinds = []schema.GroupKind{{Group: "unknown.example.com", Kind: "Gadget"}}
	res, err := f.run(result.ModeApply, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Namespace != "apps" {
		t.Errorf("result namespace %q, want apps", res.Namespace)
	}
	var got []string
	for _, e := range f.store.current("web").Entries {
		got = append(got, e.ID.String())
	}
	want := []string{"ConfigMap/apps/settings", "Service/elsewhere/api", "Namespace/apps", "ClusterRole/reader", "Widget/apps/w", "Gadget/g", "CustomResourceDefinition/widgets.example.com"}
	if !slices.Equal(got, want) {
		t.Errorf("inventory %v\nwant      %v", got, want)
	}
	for _, e := range res.Entries {
		if e.Object.Name == "settings" && e.Source != "settings.yaml" {
			t.Errorf("the source of the moved ConfigMap was lost: %+v", e)
		}
	}
}

func TestDeleteKeepsWhatItCouldNotDelete(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fail      bool
		reason    result.Reason
		inventory []string // nil: the inventory is gone
	}{
		{name: "everything deleted: the inventory goes", reason: result.ReasonDeleteSucceed},
		{name: "a delete fails: it stays in the inventory", fail: true, reason: result.ReasonPruneFailed, inventory: []string{"b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, lastRun(cmA, cmB))
			if tc.fail {
				f.pruner.fail = map[object.ID]bool{object.IDOf(cmB): true}
			}
			res, _ := f.run(result.ModeDelete, DefaultOptions())
			if res.Reason != tc.reason {
				t.Fatalf("reason %s (%s), want %s", res.Reason, res.Message, tc.reason)
			}
			inv := f.store.current("web")
			switch {
			case tc.inventory == nil && inv != nil:
				t.Errorf("inventory left: %v", names(inv.Entries))
			case tc.inventory != nil && (inv == nil || !slices.Equal(names(inv.Entries), tc.inventory)):
				t.Errorf("inventory %+v, want %v", inv, tc.inventory)
			}
		})
	}
}

// Deleting a unit with no inventory (deleted already, never applied)
// succeeds, says there was nothing to delete, and writes nothing: a
// teardown is idempotent.
func TestDeleteWithoutInventoryWritesNothing(t *testing.T) {
	f := newFixture(t, nil)
	res, err := f.run(result.ModeDelete, DefaultOptions())
	if err != nil || !res.Ready || res.Reason != result.ReasonDeleteSucceed || !strings.Contains(res.Message, "nothing to delete") || len(f.store.writes) != 0 {
		t.Fatalf("reason %s %q, err %v, writes %d", res.Reason, res.Message, err, len(f.store.writes))
	}
}

func TestFailureMessageWhenRecordingFails(t *testing.T) {
	f := newFixture(t, lastRun(cmA), cmA)
	f.renderErr = errBoom
	f.store.saveErr, f.store.saveErrAt = fmt.Errorf("forbidden"), 1
	_, err := f.run(result.ModeApply, DefaultOptions())
	if !errors.Is(err, errBoom) || !strings.Contains(err.Error(), "recording the failure in the inventory failed too: forbidden") {
		t.Errorf("err = %v", err)
	}
}

// An entry another writer recorded (merged into one of this run's writes
// on a conflict) stays in every later write: no code path loses it.
func TestForeignEntriesAreKept(t *testing.T) {
	f := newFixture(t, lastRun(cmA), cmA)
	theirs := entryOf(configMap("theirs"))
	f.store.merged = &theirs
	if _, err := f.run(result.ModeApply, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	if got := names(f.store.current("web").Entries); !slices.Contains(got, "theirs") {
		t.Errorf("inventory %v lost the entry another writer recorded", got)
	}
	if len(f.pruner.calls) != 0 {
		t.Errorf("prune was asked to delete %v: another run's object is not this run's to prune", f.pruner.calls)
	}
}

// Values found at build time (substituteFrom) are merged under the unit's
// own; a failure to find them is a build failure.
func TestVariables(t *testing.T) {
	f := newFixture(t, nil, cmA)
	opts := DefaultOptions()
	opts.Substitute = map[string]string{"ENV": "prod", "LEVEL": "debug"}
	opts.SubstitutePublic = true
	opts.Variables = func(context.Context) (map[string]string, []string, error) {
		return map[string]string{"ENV": "from-configmap", "REGION": "eu", "TOKEN": "from-a-secret", "LEVEL": "overridden-secret"}, []string{"LEVEL", "TOKEN"}, nil
	}
	var masked []string
	opts.Mask = func(v []string) { masked = append(masked, v...) }
	var seen Options
	f.renderHook = func(o Options) { seen = o }
	if _, err := f.run(result.ModeApply, opts); err != nil {
		t.Fatal(err)
	}
	if seen.Substitute["ENV"] != "prod" || seen.Substitute["REGION"] != "eu" || seen.SubstitutePublic {
		t.Errorf("substitute %v public %v: the unit's own values win, secret ones make it not public", seen.Substitute, seen.SubstitutePublic)
	}
	if !slices.Equal(masked, []string{"overridden-secret", "from-a-secret"}) {
		t.Errorf("masked %q: a Secret's values are masked, others not", masked)
	}
	if !slices.Equal(seen.SubstituteSecret, []string{"TOKEN"}) {
		t.Errorf("secret variables %q: a Secret's are, unless the unit's own value wins", seen.SubstituteSecret)
	}

	f = newFixture(t, lastRun(cmA), cmA)
	opts.Variables = func(context.Context) (map[string]string, []string, error) {
		return nil, nil, errors.New("substituteFrom ConfigMap flux-system/cluster-vars: not found")
	}
	res, err := f.run(result.ModeApply, opts)
	if err == nil || res.Reason != result.ReasonBuildFailed || !strings.Contains(res.Message, "cluster-vars") || f.rendered != 0 {
		t.Errorf("reason %s %q, rendered %d", res.Reason, res.Message, f.rendered)
	}
}

// An API server's error quotes the value it refuses (Go-quoted, or a
// whole template as JSON): the run hides its secret values in every
// message it reports and records, the inventory's status included (read
// later by status, with no key), and in the error it returns, which
// still unwraps to the failure.
func TestFailureMessagesHideSecrets(t *testing.T) {
	const secret = `s3cr+/=&"\ tok-é`
	f := newFixture(t, lastRun(cmA), cmA) // an inventory to record the failure on
	opts := DefaultOptions()
	opts.Variables = func(context.Context) (map[string]string, []string, error) {
		return map[string]string{"TOKEN": secret}, []string{"TOKEN"}, nil
	}
	js, _ := json.Marshal(map[string]string{"Value": secret})
	f.applier.dryRunErr = fmt.Errorf("ConfigMap \"a\" is invalid: metadata.labels: Invalid value: %q: a valid label; spec.template: Invalid value: %s: field is immutable", secret, js)
	res, err := f.run(result.ModeApply, opts)
	var failure *Failure
	if !errors.As(err, &failure) || failure.Reason != result.ReasonValidationFailed {
		t.Fatalf("error %T does not unwrap to the failure", err)
	}
	texts := map[string]string{"message": res.Message, "error": err.Error(), "inventory": f.store.current("web").Status.Ready.Message}
	for _, e := range res.Entries {
		texts["entry "+e.Object.String()] = e.Reason
	}
	for what, s := range texts {
		if strings.Contains(s, "s3cr") || !strings.Contains(s, `Invalid value: "***": a valid label`) || !strings.Contains(s, `{"Value":"***"}`) {
			t.Errorf("%s is not masked: %d characters", what, len(s))
		}
	}
}
