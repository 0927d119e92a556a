package validate

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Known are the schemas of custom resources known beyond the objects a
// check is given: the CustomResourceDefinitions of a whole configuration
// (its other units, and the charts they render), then a directory of
// JSON schemas (see NewKnown). A nil *Known knows none. It is safe for
// concurrent use.
//
// An object's schema is looked up in this order: a CRD among the objects
// checked, a CRD of Known, the schemas built into Kubernetes at
// KubernetesVersion, the schema directory. A kind none of them has is an
// *UnknownKindError, unless its kind is known at other versions: then
// the version is not served, an *Error.
type Known struct {
	crds map[schema.GroupVersionKind]*spec.Schema
	dir  *schemaDir
}

// NewKnown returns Known schemas read from dir, "" for none: a directory
// in the layout kubeconform reads the CRDs catalog with,
// {group}/{kind}_{version}.json with the kind in lower case (e.g.
// monitoring.coreos.com/servicemonitor_v1.json, as datreeio/CRDs-catalog
// is laid out), or {kind}_{version}.json at its top (openapi2jsonschema's
// naming), the first found winning. Each file is a standalone JSON
// schema of one kind at one version, read when first needed; a field it
// does not declare is unknown, as in a CRD's schema.
func NewKnown(dir string) (*Known, error) {
	if dir == "" {
		return &Known{}, nil
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	return &Known{dir: newSchemaDir(dir)}, nil
}

// WithCRDs returns k knowing, besides, the served versions of the
// CustomResourceDefinitions among objs; a kind k knows already keeps its
// schema. A CRD whose schema cannot be read is left out: checking the
// objects it comes with reports it.
func (k *Known) WithCRDs(objs []*unstructured.Unstructured) *Known {
	out := &Known{crds: map[schema.GroupVersionKind]*spec.Schema{}}
	if k != nil {
		out.dir = k.dir
		for gvk, s := range k.crds {
			out.crds[gvk] = s
		}
	}
	crds, _ := crdSchemas(objs, nil)
	for gvk, s := range crds {
		if _, ok := out.crds[gvk]; !ok {
			out.crds[gvk] = s
		}
	}
	return out
}

// Dir is the schema directory, "" for none.
func (k *Known) Dir() string {
	if k == nil || k.dir == nil {
		return ""
	}
	return k.dir.path
}

// Client validates objs offline, as the package's Client does, knowing k
// besides.
func (k *Known) Client(objs []*unstructured.Unstructured, sources map[object.ID]string) error {
	f, err := k.Check(objs, sources)
	if err != nil {
		return err
	}
	return f.Err()
}

// Check validates objs offline, as the package's Check does, knowing k
// besides.
func (k *Known) Check(objs []*unstructured.Unstructured, sources map[object.ID]string) (*Findings, error) {
	b, err := loadBuiltins()
	if err != nil {
		return nil, err
	}
	crds, crdErrs := crdSchemas(objs, sources)
	f := &Findings{Errors: crdErrs}
	for _, u := range objs {
		id := object.IDOf(u)
		gvk := u.GroupVersionKind()
		root, err := k.schemaFor(b, crds, gvk)
		switch {
		case errors.As(err, new(*NotServedError)):
			f.Unserved = append(f.Unserved, &Error{Object: id, Source: sources[id], Field: "apiVersion", Message: err.Error()})
		case err != nil:
			f.Errors = append(f.Errors, &Error{Object: id, Source: sources[id], Field: "apiVersion", Message: err.Error()})
		case root == nil:
			f.UnknownKinds = append(f.UnknownKinds, &UnknownKindError{Object: id, APIVersion: u.GetAPIVersion(), Source: sources[id], Looked: k.looked()})
		default:
			f.Errors = append(f.Errors, b.validate(root, u.Object, id, sources[id])...)
		}
	}
	sort.SliceStable(f.Errors, func(i, j int) bool {
		a, c := f.Errors[i], f.Errors[j]
		if a.Object != c.Object {
			return a.Object.Less(c.Object)
		}
		if a.Field != c.Field {
			return a.Field < c.Field
		}
		return a.Message < c.Message
	})
	sort.SliceStable(f.UnknownKinds, func(i, j int) bool { return f.UnknownKinds[i].Object.Less(f.UnknownKinds[j].Object) })
	return f, nil
}

// schemaFor returns the schema of gvk (see Known for the order), nil
// when there is none, or an error when the kind is known at other
// versions only, or its schema file cannot be read.
func (k *Known) schemaFor(b *builtins, build map[schema.GroupVersionKind]*spec.Schema, gvk schema.GroupVersionKind) (*spec.Schema, error) {
	if s, ok := build[gvk]; ok {
		return s, nil
	}
	if k != nil {
		if s, ok := k.crds[gvk]; ok {
			return s, nil
		}
	}
	if name, ok := b.kinds[gvk]; ok {
		return b.defs[name], nil
	}
	if k != nil && k.dir != nil {
		s, err := k.dir.lookup(gvk)
		if s != nil || err != nil {
			return s, err
		}
	}
	var served []string
	for _, m := range []map[schema.GroupVersionKind]*spec.Schema{build, k.knownCRDs()} {
		for other := range m {
			if other.GroupKind() == gvk.GroupKind() {
				served = append(served, other.Version)
			}
		}
	}
	if len(served) > 0 {
		return nil, &NotServedError{GroupVersionKind: gvk, Served: served, By: "its CustomResourceDefinition"}
	}
	for other := range b.kinds {
		if other.GroupKind() == gvk.GroupKind() {
			served = append(served, other.Version)
		}
	}
	if len(served) > 0 {
		return nil, &NotServedError{GroupVersionKind: gvk, Served: served, By: "Kubernetes " + b.version}
	}
	return nil, nil
}

func (k *Known) knownCRDs() map[schema.GroupVersionKind]*spec.Schema {
	if k == nil {
		return nil
	}
	return k.crds
}

// Builtin says whether Kubernetes itself serves gvk (at the version of
// the built-in schemas): checking it needs no CustomResourceDefinition.
func Builtin(gvk schema.GroupVersionKind) bool {
	b, err := loadBuiltins()
	if err != nil {
		return false
	}
	_, ok := b.kinds[gvk]
	return ok
}

// HasCRDs says whether k knows CustomResourceDefinitions (WithCRDs), if
// none.
func (k *Known) HasCRDs() bool { return k != nil && k.crds != nil }

// looked says where a schema was looked for, beyond the built-in ones
// and the CRDs of the objects checked.
func (k *Known) looked() string {
	var where []string
	if k.HasCRDs() {
		where = append(where, "the configuration's CustomResourceDefinitions")
	}
	if k.Dir() != "" {
		where = append(where, "the schema directory")
	}
	return strings.Join(where, " or ")
}

// NotServedError is an object whose kind is known, at other versions
// than its apiVersion's.
type NotServedError struct {
	schema.GroupVersionKind
	Served []string
	// By says who serves the kind: its CRD, or Kubernetes at its version.
	By string
}

func (e *NotServedError) Error() string {
	served := slices.Clone(e.Served)
	slices.Sort(served)
	served = slices.Compact(served)
	return fmt.Sprintf("%s is not served: %s serves %s at %s", e.GroupVersion(), e.By, GroupKind(e.GroupVersionKind), strings.Join(served, ", "))
}

// GroupKind names gvk's kind as Kind.group, or Kind in the core group:
// how kubectl names kinds, without the version.
func GroupKind(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}
