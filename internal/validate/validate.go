// Package validate checks rendered objects against Kubernetes OpenAPI
// schemas without a cluster, so a pull request from a fork can be checked
// with no credentials: built-in kinds against the schemas of a pinned
// Kubernetes version embedded in the binary, custom resources against the
// CustomResourceDefinitions in the same build.
//
// The checks are kube-openapi's schema validator (the one the API server
// runs on custom resources), made strict the way the API server's field
// validation is: a field the schema does not declare is an error.
package validate

import (
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// MaxErrors caps how many problems one joined error lists; the rest are
// counted in a final "and N more".
const MaxErrors = 50

// Error is one schema violation in one object.
type Error struct {
	Object object.ID
	// Source is the file the object was built from, if known.
	Source string
	// Field is the path of the offending field, e.g.
	// spec.template.spec.containers[0].name; empty for the whole object.
	Field   string
	Message string
}

func (e *Error) Error() string {
	s := e.Object.String()
	if e.Source != "" {
		s += " (" + e.Source + ")"
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Message
}

// UnknownKindError says an object's kind has no schema: it is not built
// into Kubernetes at KubernetesVersion and no CustomResourceDefinition in
// the build defines it. It is its own type so a caller can demote it to a
// warning (the CRD may be installed on the cluster by other means).
type UnknownKindError struct {
	Object     object.ID
	APIVersion string
	Source     string
}

func (e *UnknownKindError) Error() string {
	s := e.Object.String() + " " + e.APIVersion
	if e.Source != "" {
		s += " (" + e.Source + ")"
	}
	return s + ": unknown kind: no built-in schema and no CustomResourceDefinition in this build"
}

// Findings is everything Check found, schema violations and unknown kinds
// apart, each sorted by object then field.
type Findings struct {
	Errors       []*Error
	UnknownKinds []*UnknownKindError
}

// Err returns nil when f is empty, else one error joining every finding,
// sorted by object then field, at most MaxErrors of them.
func (f *Findings) Err() error {
	type entry struct {
		id    object.ID
		field string
		err   error
	}
	var all []entry
	for _, e := range f.Errors {
		all = append(all, entry{e.Object, e.Field, e})
	}
	for _, e := range f.UnknownKinds {
		all = append(all, entry{e.Object, "", e})
	}
	if len(all) == 0 {
		return nil
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].id != all[j].id {
			return all[i].id.Less(all[j].id)
		}
		return all[i].field < all[j].field
	})
	errs := make([]error, 0, min(len(all), MaxErrors)+1)
	for i, e := range all {
		if i == MaxErrors {
			errs = append(errs, fmt.Errorf("and %d more", len(all)-MaxErrors))
			break
		}
		errs = append(errs, e.err)
	}
	return errors.Join(errs...)
}

// Client validates objs offline and returns nil or one error joining an
// *Error per violation and an *UnknownKindError per object of unknown
// kind (see Findings.Err). sources maps objects to the files they came
// from, for the messages.
func Client(objs []*unstructured.Unstructured, sources map[object.ID]string) error {
	f, err := Check(objs, sources)
	if err != nil {
		return err
	}
	return f.Err()
}

// Check validates objs offline, like Client, and returns the findings
// uncombined. Its error is non-nil only when the embedded schemas cannot be
// read, which is a bug in the build, not in objs.
func Check(objs []*unstructured.Unstructured, sources map[object.ID]string) (*Findings, error) {
	b, err := loadBuiltins()
	if err != nil {
		return nil, err
	}
	crds, crdErrs := crdSchemas(objs, sources)
	f := &Findings{Errors: crdErrs}
	for _, u := range objs {
		id := object.IDOf(u)
		gvk := u.GroupVersionKind()
		root := schemaFor(b, crds, gvk)
		if root == nil {
			f.UnknownKinds = append(f.UnknownKinds, &UnknownKindError{Object: id, APIVersion: u.GetAPIVersion(), Source: sources[id]})
			continue
		}
		f.Errors = append(f.Errors, b.validate(root, u.Object, id, sources[id])...)
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

// schemaFor returns the schema of gvk: a CRD's in the build, else the
// built-in one, else nil.
func schemaFor(b *builtins, crds map[schema.GroupVersionKind]*spec.Schema, gvk schema.GroupVersionKind) *spec.Schema {
	if s, ok := crds[gvk]; ok {
		return s
	}
	if name, ok := b.kinds[gvk]; ok {
		return b.defs[name]
	}
	return nil
}
