package notify

import (
	"maps"
	"regexp"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"k8s.io/apimachinery/pkg/labels"
)

// Matching is notification-controller's (internal/server/event_handlers.go):
// an Alert that is not suspended takes an event when one of its
// eventSources matches the involved object (same kind, same namespace,
// the Alert's own when the source names none, the name or "*", and
// matchLabels), when its eventSeverity is info or the event's, and when
// the message matches an inclusionList expression (if any) and no
// exclusionList one.

// matches says whether a takes e.
func (a *Alert) matches(e Event) bool {
	if a.Spec.Suspend {
		return false
	}
	if !a.sourceMatches(e) {
		return false
	}
	if len(a.Spec.InclusionList) > 0 && !anyMatch(a.inclusion, e.Message) {
		return false
	}
	return !anyMatch(a.exclusion, e.Message)
}

func (a *Alert) sourceMatches(e Event) bool {
	severity := a.Spec.EventSeverity
	if e.Severity != severity && severity != SeverityInfo {
		return false
	}
	obj := e.InvolvedObject
	for _, src := range a.Spec.EventSources {
		ns := src.Namespace
		if ns == "" {
			ns = a.Ref.Namespace
		}
		if obj.Namespace != ns || obj.Kind != src.Kind {
			continue
		}
		if src.Name != "*" && src.Name != obj.Name {
			continue
		}
		if src.MatchLabels == nil || labels.SelectorFromSet(src.MatchLabels).Matches(labels.Set(e.Labels)) {
			return true
		}
	}
	return false
}

func anyMatch(exprs []*regexp.Regexp, s string) bool {
	for _, re := range exprs {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// metadata combines an event's metadata with what a adds, in the order of
// precedence of Flux's RFC 0008 (lowest first): the involved object's
// event.toolkit.fluxcd.io/ annotations, the Alert's eventMetadata, its
// summary, then the controller's own keys (<group>/revision...), each
// with its prefix taken off. Keys of no such source are dropped, as
// notification-controller drops them once any of these is present.
func metadata(e eventv1.Event, a *Alert) map[string]string {
	out := map[string]string{}
	const eventPrefix = eventv1.Group + "/"
	for k, v := range e.Metadata {
		if key, ok := strings.CutPrefix(k, eventPrefix); ok {
			out[key] = v
		}
	}
	maps.Copy(out, a.Spec.EventMetadata)
	if a.Spec.Summary != "" {
		out["summary"] = a.Spec.Summary
	}
	objectPrefix := e.InvolvedObject.GroupVersionKind().Group + "/"
	for k, v := range e.Metadata {
		if key, ok := strings.CutPrefix(k, objectPrefix); ok {
			out[key] = v
		}
	}
	if len(out) == 0 {
		return maps.Clone(e.Metadata)
	}
	return out
}
