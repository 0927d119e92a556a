package prune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

var owner = map[string]string{"kustomize-deploy.dev/name": "web", "kustomize-deploy.dev/namespace": "deploy"}

// fakeCluster holds live objects by ID and records what was deleted.
type fakeCluster struct {
	mu         sync.Mutex
	live       map[object.ID]*unstructured.Unstructured
	getErr     map[object.ID]error
	deleteErr  map[object.ID]error
	foreign    map[string][]string // namespace -> foreign objects
	foreignErr error
	deleted    []object.ID
	// onDelete runs after each delete, e.g. to cancel the context.
	onDelete func()
}

func newFake() *fakeCluster {
	return &fakeCluster{live: map[object.ID]*unstructured.Unstructured{}, getErr: map[object.ID]error{}, deleteErr: map[object.ID]error{}, foreign: map[string][]string{}}
}

// add puts a live object owned by the unit, with extra annotations.
func (f *fakeCluster) add(e inventory.Entry, annotations map[string]string) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(e.Version, e.Kind))
	u.SetNamespace(e.Namespace)
	u.SetName(e.Name)
	u.SetLabels(owner)
	u.SetAnnotations(annotations)
	f.live[e.ID] = u
}

func (f *fakeCluster) Get(_ context.Context, e inventory.Entry) (*unstructured.Unstructured, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.getErr[e.ID]; err != nil {
		return nil, err
	}
	u, ok := f.live[e.ID]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(e.Kind) + "s"}, e.Name)
	}
	return u.DeepCopy(), nil
}

func (f *fakeCluster) Delete(_ context.Context, live *unstructured.Unstructured) (result.Action, error) {
	id := object.IDOf(live)
	f.mu.Lock()
	err := f.deleteErr[id]
	if err == nil {
		delete(f.live, id)
		f.deleted = append(f.deleted, id)
	}
	f.mu.Unlock()
	if f.onDelete != nil {
		f.onDelete()
	}
	if err != nil {
		return result.Failed, err
	}
	return result.Deleted, nil
}

func (f *fakeCluster) Foreign(_ context.Context, namespace string, _ map[string]string) ([]string, error) {
	return f.foreign[namespace], f.foreignErr
}

func entry(version, kind, namespace, name string) inventory.Entry {
	gv, _ := schema.ParseGroupVersion(version)
	return inventory.Entry{ID: object.ID{Group: gv.Group, Kind: kind, Namespace: namespace, Name: name}, Version: version}
}

var (
	cm      = entry("v1", "ConfigMap", "shop", "settings")
	ns      = entry("v1", "Namespace", "", "shop")
	crd     = entry("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com")
	class   = entry("storage.k8s.io/v1", "StorageClass", "", "fast")
	deploy  = entry("apps/v1", "Deployment", "shop", "web")
	missing = entry("v1", "Service", "shop", "gone")
	widget  = entry("example.com/v1", "Widget", "shop", "gizmo")
)

func TestRunSafeguards(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		setup       func(f *fakeCluster)
		candidate   inventory.Entry
		dryRun      bool
		wantAction  result.Action
		wantReason  string // a part of it
		wantKept    bool
		wantDeleted bool
	}{
		{name: "owned object is deleted", candidate: cm,
			setup:      func(f *fakeCluster) { f.add(cm, nil) },
			wantAction: result.Deleted, wantDeleted: true},
		{name: "already gone", candidate: missing,
			wantAction: result.Skipped, wantReason: "already gone"},
		{name: "prune: disabled, ours", candidate: cm,
			setup: func(f *fakeCluster) {
				f.add(cm, map[string]string{object.AnnotationPrefix + object.PruneKey: object.Disabled})
			},
			wantAction: result.Skipped, wantReason: "prune: disabled"},
		{name: "prune: disabled, Flux's", candidate: cm,
			setup: func(f *fakeCluster) {
				f.add(cm, map[string]string{object.FluxAnnotationPrefix + object.PruneKey: object.Disabled})
			},
			wantAction: result.Skipped, wantReason: "prune: disabled"},
		{name: "helm.sh/resource-policy: keep", candidate: cm,
			setup: func(f *fakeCluster) {
				f.add(cm, map[string]string{object.HelmResourcePolicy: object.HelmKeep})
			},
			wantAction: result.Skipped, wantReason: "helm.sh/resource-policy: keep"},
		{name: "owner label changed: no longer ours", candidate: cm,
			setup: func(f *fakeCluster) {
				f.add(cm, nil)
				f.live[cm.ID].SetLabels(map[string]string{"kustomize-deploy.dev/name": "other", "kustomize-deploy.dev/namespace": "deploy"})
			},
			wantAction: result.Skipped, wantReason: `label kustomize-deploy.dev/name is not "web"`},
		{name: "owner labels stripped", candidate: cm,
			setup: func(f *fakeCluster) {
				f.add(cm, nil)
				f.live[cm.ID].SetLabels(nil)
			},
			wantAction: result.Skipped, wantReason: "no longer owns it"},
		{name: "namespace holding objects of others is kept", candidate: ns,
			setup: func(f *fakeCluster) {
				f.add(ns, nil)
				f.foreign["shop"] = []string{"ConfigMap/shop/a", "ConfigMap/shop/b", "Secret/shop/c", "Secret/shop/d"}
			},
			wantAction: result.Skipped, wantReason: "4 object(s) this unit does not own (ConfigMap/shop/a, ConfigMap/shop/b, Secret/shop/c and 1 more)", wantKept: true},
		{name: "namespace that cannot be checked is kept", candidate: ns,
			setup: func(f *fakeCluster) {
				f.add(ns, nil)
				f.foreignErr = errors.New("listing widgets in shop: forbidden")
			},
			wantAction: result.Skipped, wantReason: "cannot prove", wantKept: true},
		{name: "empty namespace is deleted", candidate: ns,
			setup:      func(f *fakeCluster) { f.add(ns, nil) },
			wantAction: result.Deleted, wantDeleted: true},
		{name: "a kind the cluster no longer serves holds nothing", candidate: widget,
			setup: func(f *fakeCluster) {
				f.getErr[widget.ID] = &kube.NotServedError{GroupVersionKind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}}
			},
			wantAction: result.Skipped, wantReason: "the cluster does not serve kind Widget.example.com (no CRD defines it): no such object can exist; dropped from the inventory"},
		{name: "failed read is kept", candidate: cm,
			setup:      func(f *fakeCluster) { f.getErr[cm.ID] = errors.New("connection refused") },
			wantAction: result.Failed, wantReason: "reading it before deleting: connection refused", wantKept: true},
		{name: "failed delete is kept", candidate: cm,
			setup: func(f *fakeCluster) {
				f.add(cm, nil)
				f.deleteErr[cm.ID] = errors.New("forbidden")
			},
			wantAction: result.Failed, wantReason: "forbidden", wantKept: true},
		{name: "dry run deletes nothing", candidate: cm, dryRun: true,
			setup:      func(f *fakeCluster) { f.add(cm, nil) },
			wantAction: result.Deleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			if tc.setup != nil {
				tc.setup(f)
			}
			out, err := Run(context.Background(), f, []inventory.Entry{tc.candidate}, Options{OwnerLabels: owner, DryRun: tc.dryRun})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Entries) != 1 {
				t.Fatalf("entries %+v, want one", out.Entries)
			}
			e := out.Entries[0]
			if e.Action != tc.wantAction || !strings.Contains(e.Reason, tc.wantReason) || e.Stage != result.StagePrune || e.Object != tc.candidate.ID {
				t.Errorf("entry %+v, want action %s with reason containing %q", e, tc.wantAction, tc.wantReason)
			}
			if kept := slices.Contains(out.Keep, tc.candidate); kept != tc.wantKept {
				t.Errorf("kept in the inventory: %v, want %v", kept, tc.wantKept)
			}
			if deleted := slices.Contains(f.deleted, tc.candidate.ID); deleted != tc.wantDeleted {
				t.Errorf("deleted: %v, want %v", deleted, tc.wantDeleted)
			}
			if (out.Err() != nil) != (tc.wantAction == result.Failed) {
				t.Errorf("Err() = %v for action %s", out.Err(), tc.wantAction)
			}
		})
	}
}

// Objects in a Namespace go before it, classes before definitions: the
// reverse of the apply stages.
func TestRunDeletesInReverseStageOrder(t *testing.T) {
	t.Parallel()
	f := newFake()
	all := []inventory.Entry{crd, ns, class, cm, deploy}
	for _, e := range all {
		f.add(e, nil)
	}
	out, err := Run(context.Background(), f, all, Options{OwnerLabels: owner})
	if err != nil {
		t.Fatal(err)
	}
	pos := map[object.ID]int{}
	for i, id := range f.deleted {
		pos[id] = i
	}
	if len(f.deleted) != len(all) || len(out.Keep) != 0 {
		t.Fatalf("deleted %v, kept %v", f.deleted, out.Keep)
	}
	for _, before := range []inventory.Entry{cm, deploy} {
		if pos[before.ID] > pos[class.ID] {
			t.Errorf("%s deleted after the StorageClass: %v", before.ID, f.deleted)
		}
	}
	for _, def := range []inventory.Entry{ns, crd} {
		if pos[class.ID] > pos[def.ID] {
			t.Errorf("StorageClass deleted after %s: %v", def.ID, f.deleted)
		}
	}
	// The Namespace goes after the CRDs: its check for foreign objects
	// must not list kinds that are on their way out.
	if pos[crd.ID] > pos[ns.ID] {
		t.Errorf("the Namespace was deleted before the CRD: %v", f.deleted)
	}
}

// A run cancelled half way keeps every candidate it did not reach: only
// what was proven deleted leaves the inventory.
func TestRunCancelledKeepsWhatItDidNotReach(t *testing.T) {
	t.Parallel()
	f := newFake()
	var all []inventory.Entry
	for i := range 3 * concurrency {
		e := entry("v1", "ConfigMap", "shop", fmt.Sprintf("cm-%02d", i))
		f.add(e, nil)
		all = append(all, e)
	}
	all = append(all, ns)
	f.add(ns, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.onDelete = cancel // the first delete ends the run
	out, err := Run(ctx, f, all, Options{OwnerLabels: owner})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(f.deleted) == 0 || len(f.deleted) >= len(all) {
		t.Fatalf("deleted %d of %d; the test needs a run cut short", len(f.deleted), len(all))
	}
	if !slices.Contains(out.Keep, ns) {
		t.Error("the Namespace, never reached, left the inventory")
	}
	for _, e := range all {
		gone := slices.Contains(f.deleted, e.ID)
		if kept := slices.Contains(out.Keep, e); kept == gone {
			t.Errorf("%s: deleted %v, kept %v; exactly one must hold", e.ID, gone, kept)
		}
	}
	for _, e := range out.Entries {
		if e.Object == (object.ID{}) {
			t.Errorf("an entry for a candidate never reached: %+v", e)
		}
	}
}

// Waiting for deleted objects to be gone ends for those not found and for
// those of a kind the cluster no longer serves (the CRD went with them).
func TestWaitGoneCountsUnservedKindsAsGone(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.getErr[widget.ID] = &kube.NotServedError{GroupVersionKind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}}
	if err := WaitGone(t.Context(), f, []inventory.Entry{widget, missing}, time.Minute, time.Millisecond); err != nil {
		t.Fatal(err)
	}
}

// A wait that cannot read an object ends at once, saying so: no wait
// makes it readable.
func TestWaitGoneEndsWhenItMayNotRead(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.getErr[ns.ID] = apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "shop", errors.New(`User "deployer" cannot get resource "namespaces"`))
	err := WaitGone(t.Context(), f, []inventory.Entry{ns}, time.Hour, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "cannot tell whether Namespace/shop is gone") {
		t.Errorf("error %v", err)
	}
}

// Deletes refused for one cause are one line of the error.
func TestOutcomeErrGroupsCauses(t *testing.T) {
	t.Parallel()
	f := newFake()
	var all []inventory.Entry
	for i := range 5 {
		e := entry("v1", "ConfigMap", "shop", fmt.Sprintf("cm-%d", i))
		f.add(e, nil)
		f.deleteErr[e.ID] = errors.New("forbidden")
		all = append(all, e)
	}
	out, err := Run(t.Context(), f, all, Options{OwnerLabels: owner})
	if err != nil {
		t.Fatal(err)
	}
	want := "deleting it: forbidden — 5 objects, e.g. ConfigMap/shop/cm-0, ConfigMap/shop/cm-1, ConfigMap/shop/cm-2 and 2 more"
	if got := out.Err(); got == nil || got.Error() != want {
		t.Errorf("error %v, want %s", got, want)
	}
}

// A prune selector (kustomize.fluxcd.io/v1alpha1's spec.prune) deletes
// only the objects whose labels match it; the others stay in the
// cluster and leave the inventory.
func TestRunSelectorLimitsPruning(t *testing.T) {
	f := newFake()
	matching, other := entry("v1", "ConfigMap", "dev", "backend"), entry("v1", "ConfigMap", "dev", "by-hand")
	f.add(matching, nil)
	f.add(other, nil)
	f.live[matching.ID].SetLabels(map[string]string{"kustomize-deploy.dev/name": "web", "kustomize-deploy.dev/namespace": "deploy", "part-of": "webapp", "component": "backend"})
	sel, err := labels.Parse("part-of=webapp,component=backend")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), f, []inventory.Entry{matching, other}, Options{OwnerLabels: owner, Selector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.deleted, []object.ID{matching.ID}) || len(out.Keep) != 0 {
		t.Errorf("deleted %v, kept %v", f.deleted, out.Keep)
	}
	for _, e := range out.Entries {
		if e.Object == other.ID && (e.Action != result.Skipped || !strings.Contains(e.Reason, `do not match the prune selector "component=backend,part-of=webapp"`)) {
			t.Errorf("the object outside the selector: %s %q", e.Action, e.Reason)
		}
	}
}
