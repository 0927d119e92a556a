package pipeline

import (
	"fmt"
	"maps"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A diff writes nothing, so in a diff of several units, a unit that runs
// after another (its dependency, or the Kustomization that applies it)
// finds the cluster without what that one's apply would create: the first
// pull request of a new cluster, or one that adds a tenant, would fail
// where its apply succeeds ("namespace not found", or the tenant's service
// account, which does not exist yet, forbidden everything). What the
// earlier units would create counts as present, as a unit's own new
// Namespace does: objects in such a Namespace, or of a kind such a CRD
// defines, are created and checked offline; a service account such a unit
// creates, or grants rights to, is not impersonated yet: the dry-run runs
// as the caller, and the result says that the account's rights are
// checked once it exists.

// Prerequisites are what units of a diff would create that the cluster
// does not hold, each by the unit that would: Namespaces and kinds (a
// CRD's group/kind) it would create; service accounts ("namespace/name")
// it would create, and those whose rights a RoleBinding or
// ClusterRoleBinding it would create or change grants.
type Prerequisites struct {
	Namespaces map[string]string
	Kinds      map[schema.GroupKind]string
	Accounts   map[string]string
	Grants     map[string]string
}

// Add adds what p holds to ps (the first unit named for each wins).
func (ps *Prerequisites) Add(p Prerequisites) {
	for _, pair := range []struct{ to, from *map[string]string }{{&ps.Namespaces, &p.Namespaces}, {&ps.Accounts, &p.Accounts}, {&ps.Grants, &p.Grants}} {
		for k, v := range *pair.from {
			if *pair.to == nil {
				*pair.to = map[string]string{}
			}
			if _, ok := (*pair.to)[k]; !ok {
				(*pair.to)[k] = v
			}
		}
	}
	for k, v := range p.Kinds {
		if ps.Kinds == nil {
			ps.Kinds = map[schema.GroupKind]string{}
		}
		if _, ok := ps.Kinds[k]; !ok {
			ps.Kinds[k] = v
		}
	}
}

// created is what the apply package takes of ps; nil ps has none.
func (ps *Prerequisites) created() apply.Created {
	if ps == nil {
		return apply.Created{}
	}
	c := apply.Created{Namespaces: map[string]bool{}, Kinds: map[string]bool{}}
	for ns := range ps.Namespaces {
		c.Namespaces[ns] = true
	}
	for gk := range ps.Kinds {
		c.Kinds[gk.Group+"/"+gk.Kind] = true
	}
	return c
}

// kinds are the kinds ps says CRDs will define.
func (ps *Prerequisites) kinds() []schema.GroupKind {
	if ps == nil {
		return nil
	}
	var out []schema.GroupKind
	for gk := range maps.Keys(ps.Kinds) {
		out = append(out, gk)
	}
	return out
}

// unready says why the rights of service account namespace/name cannot be
// checked yet ("" when they can): an earlier unit creates it, or grants
// it rights.
func (ps *Prerequisites) unready(namespace, name string) string {
	if ps == nil || name == "" {
		return ""
	}
	key := namespace + "/" + name
	if unit, ok := ps.Accounts[key]; ok {
		return fmt.Sprintf("ServiceAccount %s does not exist yet: unit %s, run before this one, creates it", key, unit)
	}
	if unit, ok := ps.Grants[key]; ok {
		return fmt.Sprintf("the rights of ServiceAccount %s are granted or changed by unit %s, run before this one", key, unit)
	}
	return ""
}

// prerequisites are what the dry-run plan p says the unit would create
// that others may need: Namespaces, CRDs' kinds and service accounts it
// creates, and the service accounts the role bindings it creates or
// changes name.
func prerequisites(unit string, p *apply.Plan) Prerequisites {
	var ps Prerequisites
	add := func(m *map[string]string, k string) {
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[k] = unit
	}
	for _, s := range p.Steps {
		u := s.Object
		created := s.Entry.Action == result.Created
		switch gk := u.GroupVersionKind().GroupKind(); {
		case created && utils.IsNamespace(u):
			add(&ps.Namespaces, u.GetName())
		case created && utils.IsCRD(u):
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			if ps.Kinds == nil {
				ps.Kinds = map[schema.GroupKind]string{}
			}
			ps.Kinds[schema.GroupKind{Group: group, Kind: kind}] = unit
		case created && gk == schema.GroupKind{Kind: "ServiceAccount"}:
			add(&ps.Accounts, u.GetNamespace()+"/"+u.GetName())
		case (created || s.Entry.Action == result.Configured) && gk.Group == "rbac.authorization.k8s.io" && (gk.Kind == "RoleBinding" || gk.Kind == "ClusterRoleBinding"):
			subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
			for _, sub := range subjects {
				m, _ := sub.(map[string]any)
				if m["kind"] != "ServiceAccount" {
					continue
				}
				name, _ := m["name"].(string)
				ns, _ := m["namespace"].(string)
				if ns == "" {
					ns = u.GetNamespace() // a RoleBinding's own, as RBAC reads it
				}
				add(&ps.Grants, ns+"/"+name)
			}
		}
	}
	return ps
}
