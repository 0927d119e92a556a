package build

import (
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
)

// originAnnotation is where kustomize records the file an object came from.
const originAnnotation = "config.kubernetes.io/origin"

// toObjects converts kustomize's output, in order, to unstructured objects
// and returns the source file of each, relative to root. Build annotations
// are removed: they describe the build, not the desired state.
func toObjects(m resmap.ResMap, wrapperDir, root string) ([]*unstructured.Unstructured, []string, error) {
	var objs []*unstructured.Unstructured
	var sources []string
	for _, res := range m.Resources() {
		origin, err := res.GetOrigin()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: reading its origin: %w", res.CurId(), err)
		}
		src := sourceOf(origin, wrapperDir, root)
		u, err := resourceObject(res)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", src, err)
		}
		objs = append(objs, u)
		sources = append(sources, src)
	}
	return objs, sources, nil
}

// resourceObject is a kustomize resource as an object, without the build's
// annotations.
func resourceObject(res *resource.Resource) (*unstructured.Unstructured, error) {
	data, err := res.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var obj map[string]interface{}
	// apimachinery's json keeps integers as int64, as unstructured expects.
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	if err := checkObject(obj); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	stripBuildAnnotations(u)
	return u, nil
}

// sourceOf turns a kustomize origin into a path relative to root. Origin
// paths are relative to the root kustomization, here the wrapper. A
// generated object's source is the kustomization that generated it; a
// remote one's is repo//path?ref=ref.
func sourceOf(o *resource.Origin, wrapperDir, root string) string {
	if o == nil {
		return ""
	}
	p := o.Path
	if o.ConfiguredIn != "" {
		p = o.ConfiguredIn
	}
	if o.Repo != "" {
		s := o.Repo + "//" + filepath.ToSlash(p)
		if o.Ref != "" {
			s += "?ref=" + o.Ref
		}
		return s
	}
	return relTo(root, filepath.Join(wrapperDir, p))
}

// stripBuildAnnotations removes the annotations kustomize and kyaml use
// for bookkeeping during a build.
func stripBuildAnnotations(u *unstructured.Unstructured) {
	a := u.GetAnnotations()
	if a == nil {
		return
	}
	for k := range a {
		if k == originAnnotation || k == "config.k8s.io/id" || strings.HasPrefix(k, "internal.config.kubernetes.io/") {
			delete(a, k)
		}
	}
	if len(a) == 0 {
		a = nil
	}
	u.SetAnnotations(a)
}

// clearClusterScopedNamespaces undoes the target namespace on objects whose
// kind a CustomResourceDefinition in the same build declares cluster-scoped.
// Kustomize only knows the scope of built-in kinds, and sets the namespace
// on every kind it does not know.
func clearClusterScopedNamespaces(objs []*unstructured.Unstructured, namespace string) {
	if namespace == "" {
		return
	}
	clusterScoped := map[schema.GroupKind]bool{}
	for _, u := range objs {
		if u.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			continue
		}
		scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		if scope == "Cluster" {
			clusterScoped[schema.GroupKind{Group: group, Kind: kind}] = true
		}
	}
	for _, u := range objs {
		if clusterScoped[u.GroupVersionKind().GroupKind()] && u.GetNamespace() == namespace {
			u.SetNamespace("")
		}
	}
}
