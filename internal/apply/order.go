package apply

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sendOrder returns the indexes of a stage's steps in the order their
// applies are sent: the plan's order (ssa's kind order, which the reports
// keep), except that ConfigMaps and Secrets that no other object of the
// stage names are sent after the stage's workloads.
//
// A workload is ready only once its controller has rolled it out, which
// takes the controller-manager, the scheduler and the kubelets a while
// after the apply; a ConfigMap is ready once created. In ssa's order every
// ConfigMap and Secret comes before the first Deployment, so a unit of a
// thousand ConfigMaps and a few Deployments started the rollouts only
// once the thousand were written, and then waited for them. Sent first,
// the workloads roll out while the rest is written. What a workload needs
// still comes first: a ConfigMap or Secret whose name appears anywhere in
// another object of the stage (a pod template's volume, env, envFrom or
// imagePullSecrets, a ServiceAccount's imagePullSecrets, a custom
// resource's secretRef…) keeps its place, and so does every other kind;
// the objects nothing names are read by no pod at start. Applies are sent
// several at a time, so the plan's order was never a guarantee between
// two objects of one stage (nor is it in Flux, whose ssa applies
// concurrently too); what it decides is which requests go early.
func sendOrder(steps []Step) []int {
	order := make([]int, 0, len(steps))
	lastWorkload := -1
	for i, s := range steps {
		if isWorkload(s.Object) {
			lastWorkload = i
		}
	}
	if lastWorkload < 0 {
		for i := range steps {
			order = append(order, i)
		}
		return order
	}
	named := namesMentioned(steps)
	var later []int
	for i, s := range steps {
		if i < lastWorkload && isData(s.Object) && !named[s.Object.GetName()] {
			later = append(later, i)
			continue
		}
		order = append(order, i)
		if i == lastWorkload {
			order = append(order, later...)
		}
	}
	return order
}

// isWorkload says whether u is ready only once pods of its own run.
func isWorkload(u *unstructured.Unstructured) bool {
	if u == nil {
		return false
	}
	gvk := u.GroupVersionKind()
	switch gvk.Group {
	case "apps":
		switch gvk.Kind {
		case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet":
			return true
		}
	case "batch":
		return gvk.Kind == "Job"
	case "":
		return gvk.Kind == "Pod"
	}
	return false
}

// isData says whether u is a ConfigMap or a Secret.
func isData(u *unstructured.Unstructured) bool {
	if u == nil {
		return false
	}
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && (gvk.Kind == "ConfigMap" || gvk.Kind == "Secret")
}

// namesMentioned returns every string value held by the steps' objects
// other than ConfigMaps and Secrets (whose data may hold anything, and
// which name nothing a pod needs), their own name and namespace apart:
// labels and annotations count (a reloader's annotation names ConfigMaps).
// Each value counts whole and cut at every character a name cannot hold,
// so that "--config-map=settings" or "apps/settings" names settings.
func namesMentioned(steps []Step) map[string]bool {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			seen[v] = true
			for _, tok := range strings.FieldsFunc(v, notInName) {
				seen[tok] = true
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, s := range steps {
		if s.Object == nil || isData(s.Object) {
			continue
		}
		for k, v := range s.Object.Object {
			if k != "metadata" {
				walk(v)
				continue
			}
			meta, _ := v.(map[string]any)
			for mk, mv := range meta {
				if mk != "name" && mk != "namespace" { // the object's own, not a reference
					walk(mv)
				}
			}
		}
	}
	return seen
}

// notInName says whether r cannot be part of an object's name (a DNS
// subdomain: lower-case letters, digits, '-' and '.').
func notInName(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.')
}
