package health

import (
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// DefaultObserveGrace is the longest a wait goes on once all it still
// waits for are objects no controller has observed; with a short timeout
// the grace is a quarter of it (Options.ObserveGrace).
const DefaultObserveGrace = 30 * time.Second

// observeGrace is the grace for a wait of timeout: DefaultObserveGrace,
// or a quarter of a timeout shorter than four times that, so the wait
// says why well before the timeout would.
func observeGrace(timeout time.Duration) time.Duration {
	if q := timeout / 4; q > 0 && q < DefaultObserveGrace {
		return q
	}
	return DefaultObserveGrace
}

// unobserved reports whether no controller has ever acted on rs's object:
// kstatus has it in progress only because its status.observedGeneration
// is the value its CRD defaults it to (Flux's say -1) or 0, and its status
// holds no condition, which a working controller sets (Reconciling) as it
// first takes the object up. Such an object waits out any timeout: its
// controller is not running, or not installed.
//
// An object whose status has no observedGeneration at all is not: Jobs,
// Services and PersistentVolumeClaims have none, and are merely slow.
func unobserved(rs *event.ResourceStatus) bool {
	if rs == nil || rs.Status != status.InProgressStatus || rs.Resource == nil {
		return false
	}
	if rs.Resource.GetGeneration() < 1 {
		return false
	}
	observed, found, err := unstructured.NestedInt64(rs.Resource.Object, "status", "observedGeneration")
	if err != nil || !found || observed > 0 {
		return false
	}
	conditions, _, _ := unstructured.NestedSlice(rs.Resource.Object, "status", "conditions")
	return len(conditions) == 0
}

// controllerOf names who should act on kind gk: the Flux controller of
// Flux's kinds, which a push-based run often carries over from a Flux
// repository to a cluster without Flux; else its controller.
func controllerOf(gk schema.GroupKind) string {
	switch gk.Group {
	case "helm.toolkit.fluxcd.io":
		return "helm-controller"
	case "kustomize.toolkit.fluxcd.io":
		return "kustomize-controller"
	case "source.toolkit.fluxcd.io":
		return "source-controller"
	case "notification.toolkit.fluxcd.io":
		return "notification-controller"
	case "image.toolkit.fluxcd.io":
		if gk.Kind == "ImageUpdateAutomation" {
			return "image-automation-controller"
		}
		return "image-reflector-controller"
	}
	if strings.HasSuffix(gk.Group, ".toolkit.fluxcd.io") {
		return "the Flux controller of " + gk.Group
	}
	return "its controller"
}

// noController says that no controller seems to act on kind gk, and asks
// about the one that should.
func noController(gk schema.GroupKind) string {
	return fmt.Sprintf("no controller seems to act on %s: is %s running?", object.KindName(gk), controllerOf(gk))
}

// unobservedLines are the unobserved objects, one line per kind naming
// its objects.
func unobservedLines(objs []Unready) []string {
	failures := make([]object.Failure, len(objs))
	for i, u := range objs {
		gk := schema.GroupKind{Group: u.Object.Group, Kind: u.Object.Kind}
		failures[i] = object.Failure{Located: object.Located{ID: u.Object}, Cause: noController(gk)}
	}
	var out []string
	for _, g := range object.ByCause(failures) {
		out = append(out, g.String())
	}
	return out
}

// unobservedHeader introduces n objects no controller observed in a wait
// that lasted waited.
func unobservedHeader(n int, waited time.Duration) string {
	return fmt.Sprintf("%d object(s) not observed by any controller after %s (status.observedGeneration never set):", n, waited)
}
