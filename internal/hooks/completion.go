package hooks

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// state is how far a hook got: running until done or failed.
type state int

const (
	running state = iota
	done
	failed
)

// waitsFor reports whether a hook of u's kind is waited for.
func waitsFor(u *unstructured.Unstructured) bool {
	gk := u.GroupVersionKind().GroupKind()
	return (gk.Group == "batch" && gk.Kind == "Job") || (gk.Group == "" && gk.Kind == "Pod")
}

// completion is the state of a hook as its object u says and, for a
// failure, why, as Helm judges hooks: a Job is done when complete and
// failed when failed; a Pod, when it succeeded or failed; any other kind
// is done once it exists.
func completion(u *unstructured.Unstructured) (state, string) {
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
				return done, ""
			case "Failed":
				return failed, fmt.Sprintf("the Job failed: %v: %v", m["reason"], m["message"])
			}
		}
		return running, ""
	case gk.Group == "" && gk.Kind == "Pod":
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		switch phase {
		case "Succeeded":
			return done, ""
		case "Failed":
			msg, _, _ := unstructured.NestedString(u.Object, "status", "message")
			reason, _, _ := unstructured.NestedString(u.Object, "status", "reason")
			return failed, fmt.Sprintf("the Pod failed: %s: %s", or(reason, "Failed"), or(msg, "(no message)"))
		}
		return running, ""
	}
	return done, ""
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
