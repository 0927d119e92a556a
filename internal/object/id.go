// Package object names Kubernetes objects the way every pipeline step and
// every report refers to them.
package object

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ID identifies an object in a cluster regardless of API version.
type ID struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// IDOf returns the ID of u.
func IDOf(u *unstructured.Unstructured) ID {
	gvk := u.GroupVersionKind()
	return ID{Group: gvk.Group, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// String formats the ID as Flux and kubectl users read it:
// Kind/namespace/name, or Kind/name for cluster-scoped objects.
func (id ID) String() string {
	if id.Namespace == "" {
		return id.Kind + "/" + id.Name
	}
	return id.Kind + "/" + id.Namespace + "/" + id.Name
}

// Less orders IDs by group, kind, namespace and name, for stable output.
func (id ID) Less(o ID) bool {
	if id.Group != o.Group {
		return id.Group < o.Group
	}
	if id.Kind != o.Kind {
		return id.Kind < o.Kind
	}
	if id.Namespace != o.Namespace {
		return id.Namespace < o.Namespace
	}
	return id.Name < o.Name
}
