package validate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Served says at which versions the cluster serves a kind: none when it
// serves it at none (no CRD defines it). Its error is a discovery that
// could not tell.
type Served func(gk schema.GroupKind) (versions []string, err error)

// UnservedKind is a kind that objects of the unit have and that the
// cluster cannot take: it does not serve the kind at the objects'
// version, and neither does a CRD of the unit.
type UnservedKind struct {
	Kind schema.GroupVersionKind
	// Served are the versions the cluster, or a CRD of the unit, serves
	// the kind at instead; none when nothing defines the kind.
	Served []string
	// Objects are the objects of that kind, with their files, in order.
	Objects []object.Located
}

// Reason says why no object of the kind can be applied.
func (k UnservedKind) Reason() string {
	name := k.Kind.Kind + " (" + k.Kind.GroupVersion().String() + ")"
	if len(k.Served) > 0 {
		return fmt.Sprintf("kind %s is not served: %s is served only at version %s", name, object.KindName(k.Kind.GroupKind()), strings.Join(k.Served, ", "))
	}
	return "kind " + name + " is not served by the cluster and no CRD of this unit defines it (is its CRD installed?)"
}

// UnservedKindsError lists the kinds no object of which could be
// applied: applying the unit would write its Namespaces and other
// definitions, then fail on the first of them.
type UnservedKindsError struct {
	Kinds []UnservedKind
}

func (e *UnservedKindsError) Error() string {
	lines := make([]string, len(e.Kinds))
	for i, k := range e.Kinds {
		lines[i] = object.Group{Cause: k.Reason(), Objects: k.Objects}.String()
	}
	return strings.Join(lines, "\n")
}

// Kinds checks, before anything is written, that the cluster can take
// every object of objs: its kind is served at its version, by the
// cluster (served) or by a CRD among objs, or it is one of known (kinds
// that CRDs elsewhere define, applied before this unit's turn). sources
// name the objects' files. It returns nil, an *UnservedKindsError, or
// the error of a discovery that could not tell.
func Kinds(objs []*unstructured.Unstructured, sources map[object.ID]string, known []schema.GroupKind, served Served) error {
	defined := crdVersions(objs)
	byKind := map[schema.GroupVersionKind]*UnservedKind{}
	var order []schema.GroupVersionKind
	asked := map[schema.GroupKind][]string{}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		gk := gvk.GroupKind()
		if slices.Contains(known, gk) || slices.Contains(defined[gk], gvk.Version) {
			continue
		}
		versions, ok := asked[gk]
		if !ok {
			var err error
			if versions, err = served(gk); err != nil {
				return err
			}
			asked[gk] = versions
		}
		if slices.Contains(versions, gvk.Version) {
			continue
		}
		k := byKind[gvk]
		if k == nil {
			k = &UnservedKind{Kind: gvk, Served: append(slices.Clone(versions), defined[gk]...)}
			byKind[gvk] = k
			order = append(order, gvk)
		}
		id := object.IDOf(u)
		k.Objects = append(k.Objects, object.Located{ID: id, Source: sources[id]})
	}
	if len(order) == 0 {
		return nil
	}
	sort.Slice(order, func(i, j int) bool { return order[i].String() < order[j].String() })
	e := &UnservedKindsError{}
	for _, gvk := range order {
		e.Kinds = append(e.Kinds, *byKind[gvk])
	}
	return e
}

// crdVersions returns, per kind a CustomResourceDefinition of objs
// defines, the versions it serves.
func crdVersions(objs []*unstructured.Unstructured) map[schema.GroupKind][]string {
	out := map[schema.GroupKind][]string{}
	for _, u := range objs {
		if u.GroupVersionKind() != crdGVK {
			continue
		}
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		gk := schema.GroupKind{Group: group, Kind: kind}
		for _, v := range versions {
			vm, _ := v.(map[string]any)
			name, _, _ := unstructured.NestedString(vm, "name")
			if served, _, _ := unstructured.NestedBool(vm, "served"); served && name != "" {
				out[gk] = append(out[gk], name)
			}
		}
	}
	return out
}
