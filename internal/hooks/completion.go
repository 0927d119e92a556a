package hooks

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// State is how far a hook got.
type State int

// A hook is Running until it is Done or Failed.
const (
	Running State = iota
	Done
	Failed
)

// Completion is the state of a hook as its object u says, as Helm judges
// hooks: a Job is done when complete and failed when failed; a Pod, when
// it succeeded or failed; any other kind is done once it exists.
func Completion(u *unstructured.Unstructured) State {
	s, _ := completion(u)
	return s
}

// waitsFor reports whether a hook of u's kind is waited for.
func waitsFor(u *unstructured.Unstructured) bool {
	gk := u.GroupVersionKind().GroupKind()
	return (gk.Group == "batch" && gk.Kind == "Job") || (gk.Group == "" && gk.Kind == "Pod")
}

// completion is Completion and, for a failure, why.
func completion(u *unstructured.Unstructured) (State, string) {
	gk := u.GroupVersionKind().GroupKind()
	switch {
	case gk.Group == "batch" && gk.Kind == "Job":
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["status"] != "True" {
				continue
			}
			switch m["type"] {
			case "Complete":
				return Done, ""
			case "Failed":
				return Failed, fmt.Sprintf("the Job failed: %v: %v", m["reason"], m["message"])
			}
		}
		return Running, ""
	case gk.Group == "" && gk.Kind == "Pod":
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		switch phase {
		case "Succeeded":
			return Done, ""
		case "Failed":
			msg, _, _ := unstructured.NestedString(u.Object, "status", "message")
			reason, _, _ := unstructured.NestedString(u.Object, "status", "reason")
			return Failed, fmt.Sprintf("the Pod failed: %s: %s", or(reason, "Failed"), or(msg, "(no message)"))
		}
		return Running, ""
	}
	return Done, ""
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
