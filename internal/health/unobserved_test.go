package health

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/collector"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	cliobject "github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var helmRelease = cliobject.ObjMetadata{GroupKind: schema.GroupKind{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease"}, Namespace: "ns", Name: "podinfo"}

// resourceStatus is kstatus's verdict st on an object of generation 1
// with the given status (nil: none).
func resourceStatus(id cliobject.ObjMetadata, st status.Status, objStatus map[string]any) *event.ResourceStatus {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": id.GroupKind.Group + "/v1",
		"kind":       id.GroupKind.Kind,
		"metadata":   map[string]any{"name": id.Name, "namespace": id.Namespace, "generation": int64(1)},
	}}
	if objStatus != nil {
		u.Object["status"] = objStatus
	}
	return &event.ResourceStatus{Identifier: id, Status: st, Resource: u}
}

func TestUnobserved(t *testing.T) {
	t.Parallel()
	reconciling := []any{map[string]any{"type": "Reconciling", "status": "True", "reason": "Progressing"}}
	for _, tc := range []struct {
		name string
		rs   *event.ResourceStatus
		want bool
	}{
		{"observedGeneration -1, as Flux's CRDs default it", resourceStatus(helmRelease, status.InProgressStatus, map[string]any{"observedGeneration": int64(-1)}), true},
		{"observedGeneration 0", resourceStatus(helmRelease, status.InProgressStatus, map[string]any{"observedGeneration": int64(0)}), true},
		{"a controller took it up: Reconciling", resourceStatus(helmRelease, status.InProgressStatus, map[string]any{"observedGeneration": int64(-1), "conditions": reconciling}), false},
		{"an older generation observed: slow, not unobserved", resourceStatus(helmRelease, status.InProgressStatus, map[string]any{"observedGeneration": int64(1)}), false},
		{"no observedGeneration field (a Job, a Service)", resourceStatus(deployment("migrate"), status.InProgressStatus, map[string]any{"active": int64(1)}), false},
		{"no status at all", resourceStatus(deployment("web"), status.InProgressStatus, nil), false},
		{"current", resourceStatus(helmRelease, status.CurrentStatus, map[string]any{"observedGeneration": int64(-1)}), false},
		{"not read yet", &event.ResourceStatus{Identifier: helmRelease, Status: status.UnknownStatus}, false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := unobserved(tc.rs); got != tc.want {
				t.Errorf("unobserved() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNoControllerNamesTheController(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		gk   schema.GroupKind
		want string
	}{
		{schema.GroupKind{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease"}, "no controller seems to act on HelmRelease.helm.toolkit.fluxcd.io: is helm-controller running?"},
		{schema.GroupKind{Group: "source.toolkit.fluxcd.io", Kind: "HelmRepository"}, "no controller seems to act on HelmRepository.source.toolkit.fluxcd.io: is source-controller running?"},
		{schema.GroupKind{Group: "image.toolkit.fluxcd.io", Kind: "ImagePolicy"}, "no controller seems to act on ImagePolicy.image.toolkit.fluxcd.io: is image-reflector-controller running?"},
		{schema.GroupKind{Group: "image.toolkit.fluxcd.io", Kind: "ImageUpdateAutomation"}, "no controller seems to act on ImageUpdateAutomation.image.toolkit.fluxcd.io: is image-automation-controller running?"},
		{schema.GroupKind{Group: "future.toolkit.fluxcd.io", Kind: "Thing"}, "no controller seems to act on Thing.future.toolkit.fluxcd.io: is the Flux controller of future.toolkit.fluxcd.io running?"},
		{schema.GroupKind{Group: "example.com", Kind: "Widget"}, "no controller seems to act on Widget.example.com: is its controller running?"},
	} {
		if got := noController(tc.gk); got != tc.want {
			t.Errorf("noController(%v) =\n%s\nwant\n%s", tc.gk, got, tc.want)
		}
	}
}

func TestObserveGraceDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ timeout, want time.Duration }{
		{5 * time.Minute, 30 * time.Second},
		{2 * time.Minute, 30 * time.Second},
		{time.Minute, 15 * time.Second},
		{8 * time.Second, 2 * time.Second},
		{0, DefaultObserveGrace},
	} {
		if got := (Options{Timeout: tc.timeout}).withDefaults().ObserveGrace; got != tc.want {
			t.Errorf("timeout %s: grace %s, want %s", tc.timeout, got, tc.want)
		}
	}
	if got := (Options{Timeout: time.Minute, ObserveGrace: time.Second}).withDefaults().ObserveGrace; got != time.Second {
		t.Errorf("a grace given is %s, want 1s", got)
	}
}

// The observer ends the wait once only unobserved objects have been
// waited for, for the grace, and not while anything else is.
func TestObserverGivesUpOnUnobservedAfterGrace(t *testing.T) {
	t.Parallel()
	unobservedRelease := resourceStatus(helmRelease, status.InProgressStatus, map[string]any{"observedGeneration": int64(-1)})
	reconcilingRelease := resourceStatus(helmRelease, status.InProgressStatus, map[string]any{
		"observedGeneration": int64(-1), "conditions": []any{map[string]any{"type": "Reconciling", "status": "True"}},
	})
	slowDeployment := resourceStatus(deployment("web"), status.InProgressStatus, map[string]any{"observedGeneration": int64(1)})
	currentDeployment := resourceStatus(deployment("web"), status.CurrentStatus, map[string]any{"observedGeneration": int64(1)})
	for _, tc := range []struct {
		name string
		// steps are the statuses of successive events, a second apart.
		steps      [][]*event.ResourceStatus
		wantGaveUp bool
	}{
		{
			name:       "only an unobserved object",
			steps:      [][]*event.ResourceStatus{{unobservedRelease}},
			wantGaveUp: true,
		},
		{
			name:       "an unobserved object once the slow one is ready",
			steps:      [][]*event.ResourceStatus{{unobservedRelease, slowDeployment}, {unobservedRelease, currentDeployment}},
			wantGaveUp: true,
		},
		{
			name:  "a slow object is waited for",
			steps: [][]*event.ResourceStatus{{unobservedRelease, slowDeployment}},
		},
		{
			name:  "a controller takes it up within the grace",
			steps: [][]*event.ResourceStatus{{unobservedRelease}, {reconcilingRelease}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				const grace = 5 * time.Second
				settled := false
				o := &observer{settle: func() { settled = true }, grace: grace}
				defer o.stop()
				for _, step := range tc.steps {
					sc := collector.NewResourceStatusCollector(nil)
					for _, rs := range step {
						sc.ResourceStatuses[rs.Identifier] = rs
					}
					o.Notify(sc, event.Event{Type: event.ResourceUpdateEvent})
					time.Sleep(time.Second)
				}
				time.Sleep(grace - time.Second - time.Millisecond)
				synctest.Wait()
				if o.gaveUpOnUnobserved() {
					t.Fatalf("gave up before the grace had passed since the last change")
				}
				time.Sleep(time.Millisecond)
				synctest.Wait()
				if o.gaveUpOnUnobserved() != tc.wantGaveUp || settled != tc.wantGaveUp {
					t.Errorf("gave up = %v, settled = %v; want %v", o.gaveUpOnUnobserved(), settled, tc.wantGaveUp)
				}
			})
		})
	}
}

func TestProgressSaysWhatNoControllerObserved(t *testing.T) {
	t.Parallel()
	o := &observer{settle: func() {}, grace: time.Hour}
	defer o.stop()
	sc := collector.NewResourceStatusCollector(nil)
	sc.ResourceStatuses[helmRelease] = resourceStatus(helmRelease, status.InProgressStatus, map[string]any{"observedGeneration": int64(-1)})
	o.Notify(sc, event.Event{Type: event.ResourceUpdateEvent})
	want := []string{"HelmRelease/ns/podinfo (InProgress, not observed by any controller)"}
	if got := o.waiting(); len(got) != 1 || got[0] != want[0] {
		t.Errorf("waiting() = %q, want %q", got, want)
	}
}

// A wait polls every DefaultInterval unless told otherwise: it ends on the
// poll after readiness, so the interval is time every wait may lose.
func TestWaitPollsEveryDefaultInterval(t *testing.T) {
	if got := (Options{}).withDefaults().Interval; got != DefaultInterval || got > 250*time.Millisecond {
		t.Errorf("default interval %s, want DefaultInterval (%s), at most 250ms", got, DefaultInterval)
	}
	if got := (Options{Interval: time.Second}).withDefaults().Interval; got != time.Second {
		t.Errorf("interval %s, want the 1s asked for", got)
	}
}
