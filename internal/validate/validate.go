// Package validate checks rendered objects against Kubernetes OpenAPI
// schemas without a cluster, so a pull request from a fork can be checked
// with no credentials: built-in kinds against the schemas of a pinned
// Kubernetes version embedded in the binary, custom resources against the
// CustomResourceDefinitions in the same build, and those a caller knows
// besides (Known: a configuration's other CRDs, a directory of JSON
// schemas such as a vendored CRDs catalog).
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
// into Kubernetes at KubernetesVersion, no CustomResourceDefinition in
// the build defines it, nor any place Looked says. It is its own type so
// a caller can demote it to a note (the CRD may be installed on the
// cluster by other means).
type UnknownKindError struct {
	Object     object.ID
	APIVersion string
	Source     string
	// Looked says where else a schema was looked for (see Known), "" for
	// nowhere else.
	Looked string
}

func (e *UnknownKindError) Error() string {
	s := e.Object.String() + " " + e.APIVersion
	if e.Source != "" {
		s += " (" + e.Source + ")"
	}
	s += ": unknown kind: no built-in schema and no CustomResourceDefinition in this build"
	if e.Looked != "" {
		s += ", nor in " + e.Looked
	}
	return s
}

// Kind names the object's kind as Kind.group (see GroupKind).
func (e *UnknownKindError) Kind() string {
	return GroupKind(schema.FromAPIVersionAndKind(e.APIVersion, e.Object.Kind))
}

// Findings is everything Check found, schema violations and unknown kinds
// apart, each sorted by object then field.
type Findings struct {
	Errors       []*Error
	UnknownKinds []*UnknownKindError
	// Unserved are objects of a kind known at other versions than
	// theirs only (see NotServedError): an error offline, where nothing
	// else will tell; a cluster of another Kubernetes version, or with
	// other CRDs installed, may serve it.
	Unserved []*Error
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
	for _, e := range f.Unserved {
		all = append(all, entry{e.Object, e.Field, e})
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
// from, for the messages. It knows the built-in kinds and the
// CustomResourceDefinitions among objs; see Known.Client to know more.
func Client(objs []*unstructured.Unstructured, sources map[object.ID]string) error {
	return (*Known)(nil).Client(objs, sources)
}

// Check validates objs offline, like Client, and returns the findings
// uncombined. Its error is non-nil only when the embedded schemas cannot be
// read, which is a bug in the build, not in objs.
func Check(objs []*unstructured.Unstructured, sources map[object.ID]string) (*Findings, error) {
	return (*Known)(nil).Check(objs, sources)
}
