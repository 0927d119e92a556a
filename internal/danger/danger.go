// Package danger flags, without a cluster, the changes a reviewer must see
// first: what the API server would refuse (immutable fields), what would
// recreate or destroy (deleting a Namespace, a CRD, a claim), RBAC grants
// of everything, and a Flux unit's prune or suspend flipped. Each rule
// names the field and the consequence; the offline diff and the three-way
// diff put them on their entries (result.Entry.Dangers).
package danger

import (
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Risks, as the risky list counts them.
const (
	RiskRecreate = "needs recreation"
	RiskDataLoss = "data loss"
	RiskGrant    = "RBAC grant"
	RiskService  = "Service type"
	RiskPruneOff = "prune off"
	RiskPruneOn  = "prune on"
	RiskSuspend  = "suspend"
	RiskResume   = "resume"
)

// Consequences the rules share.
const (
	Immutable = "cannot be changed: the object must be recreated (the API server refuses the change)"
)

// rule is one check of a kind ("group/Kind"): old is the object before
// (nil: created), now after (nil: deleted).
type rule struct {
	kinds []string
	check func(old, now *unstructured.Unstructured) []result.Danger
}

// rules, in the order their dangers are listed.
var rules = []rule{
	{[]string{"apps/StatefulSet"}, immutable("spec.selector", "spec.volumeClaimTemplates", "spec.serviceName", "spec.podManagementPolicy")},
	{[]string{"apps/Deployment", "apps/ReplicaSet", "apps/DaemonSet"}, immutable("spec.selector")},
	{[]string{"batch/Job"}, immutable("spec.selector", "spec.template")},
	{[]string{"/PersistentVolumeClaim"}, claim},
	{[]string{"/Service"}, service},
	{[]string{"/ConfigMap", "/Secret"}, immutableData},
	{[]string{"/Namespace"}, deleted("deletes every object in the Namespace")},
	{[]string{"apiextensions.k8s.io/CustomResourceDefinition"}, deleted("deletes every custom resource of this kind, in every namespace")},
	{[]string{"/PersistentVolumeClaim"}, deleted("deletes the claim's volume and its data when its reclaim policy is Delete (dynamic provisioning's default)")},
	{[]string{"rbac.authorization.k8s.io/Role", "rbac.authorization.k8s.io/ClusterRole"}, wildcardRules},
	{[]string{"rbac.authorization.k8s.io/RoleBinding", "rbac.authorization.k8s.io/ClusterRoleBinding"}, clusterAdmin},
	{[]string{"kustomize.toolkit.fluxcd.io/Kustomization"}, prune},
	{[]string{"kustomize.toolkit.fluxcd.io/Kustomization", "helm.toolkit.fluxcd.io/HelmRelease"}, suspend},
}

// Check lists the dangers of changing old into now: nil old is a
// creation, nil now a deletion. None when both are nil or equal.
func Check(old, now *unstructured.Unstructured) []result.Danger {
	u := now
	if u == nil {
		u = old
	}
	if u == nil || old != nil && now != nil && reflect.DeepEqual(old.Object, now.Object) {
		return nil
	}
	gvk := u.GroupVersionKind()
	kind := gvk.Group + "/" + gvk.Kind
	var out []result.Danger
	for _, r := range rules {
		if slices.Contains(r.kinds, kind) {
			out = append(out, r.check(old, now)...)
		}
	}
	return out
}

// field reads a dotted path of maps.
func field(u *unstructured.Unstructured, path string) (any, bool) {
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, split(path)...)
	return v, ok && err == nil
}

func split(path string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == '.' {
			out = append(out, path[start:i])
			start = i + 1
		}
	}
	return out
}

// changed says a field both sides set differs, or one side sets it and
// the other not (the server would default it, but to the same value only
// by chance: a selector or template left out is refused too).
func changed(old, now *unstructured.Unstructured, path string) bool {
	a, aok := field(old, path)
	b, bok := field(now, path)
	return aok != bok || !reflect.DeepEqual(a, b)
}

// immutable flags the fields of paths that a configured object changes.
func immutable(paths ...string) func(old, now *unstructured.Unstructured) []result.Danger {
	return func(old, now *unstructured.Unstructured) []result.Danger {
		if old == nil || now == nil {
			return nil
		}
		var out []result.Danger
		for _, p := range paths {
			if changed(old, now, p) {
				out = append(out, result.Danger{Risk: RiskRecreate, Field: p, Consequence: Immutable})
			}
		}
		return out
	}
}

// claim flags a PersistentVolumeClaim's storage class or access modes
// changed, or its size shrunk: the API server refuses all three (a claim
// only grows).
func claim(old, now *unstructured.Unstructured) []result.Danger {
	if old == nil || now == nil {
		return nil
	}
	var out []result.Danger
	for _, p := range []string{"spec.storageClassName", "spec.accessModes"} {
		if changed(old, now, p) {
			out = append(out, result.Danger{Risk: RiskRecreate, Field: p, Consequence: Immutable})
		}
	}
	const size = "spec.resources.requests.storage"
	a, aok := quantity(old, size)
	b, bok := quantity(now, size)
	if aok && bok && b.Cmp(a) < 0 {
		out = append(out, result.Danger{Risk: RiskRecreate, Field: size,
			Consequence: "shrinks the claim from " + a.String() + " to " + b.String() + ": a claim only grows; the object must be recreated, and its data moved"})
	}
	return out
}

func quantity(u *unstructured.Unstructured, path string) (resource.Quantity, bool) {
	v, ok := field(u, path)
	if !ok {
		return resource.Quantity{}, false
	}
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case int64:
		return *resource.NewQuantity(t, resource.DecimalSI), true
	case float64:
		return *resource.NewQuantity(int64(t), resource.DecimalSI), true
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}

// service flags a Service's clusterIP changed (immutable), and its type
// changed: node ports and load balancers are allocated or released, and
// a Service turned to or from ExternalName loses or gets a cluster IP.
func service(old, now *unstructured.Unstructured) []result.Danger {
	if old == nil || now == nil {
		return nil
	}
	var out []result.Danger
	a, _, _ := unstructured.NestedString(old.Object, "spec", "clusterIP")
	b, _, _ := unstructured.NestedString(now.Object, "spec", "clusterIP")
	if a != b && a != "" && b != "" {
		out = append(out, result.Danger{Risk: RiskRecreate, Field: "spec.clusterIP", Consequence: Immutable + ", with a new address"})
	}
	from, _, _ := unstructured.NestedString(old.Object, "spec", "type")
	to, _, _ := unstructured.NestedString(now.Object, "spec", "type")
	from, to = orDefault(from, "ClusterIP"), orDefault(to, "ClusterIP")
	if from != to {
		out = append(out, result.Danger{Risk: RiskService, Field: "spec.type",
			Consequence: "changes from " + from + " to " + to + ": how clients reach the Service changes (node ports, load balancers and cluster IPs are allocated or released)"})
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// immutableData flags a ConfigMap's or Secret's data changed, or
// immutable unset, while it was immutable.
func immutableData(old, now *unstructured.Unstructured) []result.Danger {
	if old == nil || now == nil {
		return nil
	}
	if was, _, _ := unstructured.NestedBool(old.Object, "immutable"); !was {
		return nil
	}
	var out []result.Danger
	for _, p := range []string{"data", "binaryData", "stringData"} {
		if changed(old, now, p) {
			out = append(out, result.Danger{Risk: RiskRecreate, Field: p, Consequence: "of an immutable " + old.GetKind() + " " + Immutable})
		}
	}
	if still, _, _ := unstructured.NestedBool(now.Object, "immutable"); !still {
		out = append(out, result.Danger{Risk: RiskRecreate, Field: "immutable", Consequence: "cannot be unset once true: the object must be recreated (the API server refuses the change)"})
	}
	return out
}

// deleted flags the deletion of a kind whose deletion takes more with it.
func deleted(consequence string) func(old, now *unstructured.Unstructured) []result.Danger {
	return func(old, now *unstructured.Unstructured) []result.Danger {
		if old == nil || now != nil {
			return nil
		}
		return []result.Danger{{Risk: RiskDataLoss, Field: old.GetKind(), Consequence: consequence}}
	}
}

// wildcardRules flags a Role's or ClusterRole's rules granting "*" (every
// verb, resource or API group) that the object did not grant before.
func wildcardRules(old, now *unstructured.Unstructured) []result.Danger {
	if now == nil {
		return nil
	}
	before := map[string]bool{}
	if old != nil {
		for _, w := range wildcards(old) {
			before[w] = true
		}
	}
	scope := "in its namespace"
	if now.GetKind() == "ClusterRole" {
		scope = "in the whole cluster (or in each namespace a RoleBinding names it)"
	}
	var out []result.Danger
	for _, w := range wildcards(now) {
		if !before[w] {
			out = append(out, result.Danger{Risk: RiskGrant, Field: "rules[]." + w,
				Consequence: "grants \"*\": every " + singular(w) + " " + scope + ", those added later included"})
		}
	}
	return out
}

// wildcards are the fields of u's rules that hold "*": verbs, resources,
// apiGroups, nonResourceURLs (each once).
func wildcards(u *unstructured.Unstructured) []string {
	rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
	var out []string
	for _, r := range rules {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		for _, f := range []string{"apiGroups", "resources", "verbs", "nonResourceURLs"} {
			list, _, _ := unstructured.NestedStringSlice(m, f)
			if slices.Contains(list, "*") && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

func singular(f string) string {
	return map[string]string{"apiGroups": "API group", "resources": "resource", "verbs": "verb", "nonResourceURLs": "non-resource URL"}[f]
}

// clusterAdmin flags a binding to the ClusterRole cluster-admin that was
// not bound to it before.
func clusterAdmin(old, now *unstructured.Unstructured) []result.Danger {
	if now == nil || !bindsClusterAdmin(now) || old != nil && bindsClusterAdmin(old) {
		return nil
	}
	scope := "full control of the cluster"
	if now.GetKind() == "RoleBinding" {
		scope = "full control of the Namespace " + now.GetNamespace()
	}
	return []result.Danger{{Risk: RiskGrant, Field: "roleRef", Consequence: "binds cluster-admin: its subjects get " + scope}}
}

func bindsClusterAdmin(u *unstructured.Unstructured) bool {
	kind, _, _ := unstructured.NestedString(u.Object, "roleRef", "kind")
	name, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
	return kind == "ClusterRole" && name == "cluster-admin"
}

// prune flags a Flux Kustomization's spec.prune turned off (what leaves
// Git stays in the cluster) or on (what left Git is deleted).
func prune(old, now *unstructured.Unstructured) []result.Danger {
	if old == nil || now == nil {
		return nil
	}
	was, _, _ := unstructured.NestedBool(old.Object, "spec", "prune")
	is, _, _ := unstructured.NestedBool(now.Object, "spec", "prune")
	switch {
	case was && !is:
		return []result.Danger{{Risk: RiskPruneOff, Field: "spec.prune", Consequence: "turned off: objects removed from its source stay in the cluster from now on"}}
	case !was && is:
		return []result.Danger{{Risk: RiskPruneOn, Field: "spec.prune", Consequence: "turned on: the objects it applied and no longer has are deleted on its next run"}}
	}
	return nil
}

// suspend flags a Flux Kustomization's or HelmRelease's spec.suspend
// turned on (runs skip it) or off (the next run applies all that waited).
func suspend(old, now *unstructured.Unstructured) []result.Danger {
	if old == nil || now == nil {
		return nil
	}
	was, _, _ := unstructured.NestedBool(old.Object, "spec", "suspend")
	is, _, _ := unstructured.NestedBool(now.Object, "spec", "suspend")
	switch {
	case !was && is:
		return []result.Danger{{Risk: RiskSuspend, Field: "spec.suspend", Consequence: "turned on: runs skip it, drift checks included, until it is off again"}}
	case was && !is:
		return []result.Danger{{Risk: RiskResume, Field: "spec.suspend", Consequence: "turned off: its next run applies everything that waited"}}
	}
	return nil
}
