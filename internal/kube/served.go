package kube

import (
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Serving is what the cluster serves of a kind.
type Serving struct {
	// Versions are the versions the cluster serves the kind at; none
	// when it does not serve the kind at all (no CRD defines it).
	Versions []string
	// Preferred is the version the cluster prefers, when it serves any.
	Preferred string
}

// At reports whether the kind is served at version.
func (s Serving) At(version string) bool { return slices.Contains(s.Versions, version) }

// Serves says what the cluster m maps serves of kind gk. Discovery that
// fails is an error, not "not served": only a cluster that answered
// without the kind proves no object of it can exist.
func Serves(m meta.RESTMapper, gk schema.GroupKind) (Serving, error) {
	mappings, err := m.RESTMappings(gk)
	switch {
	case err != nil && NotServed(err):
		return Serving{}, nil
	case err != nil:
		return Serving{}, fmt.Errorf("discovering kind %s: %w", object.KindName(gk), err)
	}
	var s Serving
	for _, mp := range mappings {
		if !s.At(mp.GroupVersionKind.Version) {
			s.Versions = append(s.Versions, mp.GroupVersionKind.Version)
		}
	}
	if len(mappings) > 0 {
		// RESTMappings lists the preferred version first.
		s.Preferred = mappings[0].GroupVersionKind.Version
	}
	return s, nil
}

// NotServed reports whether err says only that the cluster serves no
// such kind or version: a no-match error, and every discovery failure
// behind it a NotFound (a group whose CRDs are gone).
func NotServed(err error) bool {
	if !meta.IsNoMatchError(err) {
		return false
	}
	var multi interface{ Unwrap() []error }
	if errors.As(err, &multi) {
		for _, e := range multi.Unwrap() {
			if !meta.IsNoMatchError(e) && !apierrors.IsNotFound(e) {
				return false
			}
		}
	}
	return true
}

// NotServedError is an object of a kind the cluster does not serve: it
// cannot exist there.
type NotServedError struct {
	GroupVersionKind schema.GroupVersionKind
}

func (e *NotServedError) Error() string {
	return fmt.Sprintf("the cluster does not serve kind %s (no CRD defines it)", object.KindName(e.GroupVersionKind.GroupKind()))
}
