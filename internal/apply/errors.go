package apply

import (
	"errors"
	"regexp"
	"strings"

	ssaerrors "github.com/fluxcd/pkg/ssa/errors"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// ObjectError is a failed apply or dry-run of one object.
type ObjectError struct {
	Object object.ID
	Source string
	Err    error
}

func (e *ObjectError) Error() string {
	msg := e.Object.String()
	if e.Source != "" {
		msg += " (" + e.Source + ")"
	}
	// ssa's messages already start with the object; say it once.
	msg += ": " + strings.TrimPrefix(e.Err.Error(), e.Object.String()+" ")
	if e.Immutable() {
		msg += "; the field is immutable: the object must be recreated (force, or the annotation kustomize-deploy.dev/force: enabled)"
	}
	if apierrors.IsForbidden(e.Err) {
		msg += "; the identity applying (the service account, if one is set) lacks RBAC permission for this"
	}
	return msg
}

func (e *ObjectError) Unwrap() error { return e.Err }

// immutableText is how the API server, CEL rules and webhooks say a field
// cannot change.
var immutableText = regexp.MustCompile(`(?i)immutable|may not change once set|updates to .* are forbidden|cannot be changed`)

// Immutable reports whether the object failed because a field that cannot
// change did: recreating the object gets past it. ssa's IsImmutableError
// also says so of every Invalid error (an object too large, a bad value),
// which recreating does not fix, so the message must say it too.
func (e *ObjectError) Immutable() bool {
	return ssaerrors.IsImmutableError(e.Err) && immutableText.MatchString(e.Err.Error())
}

// NeedsRecreate reports whether any object error in err (joined errors
// included) is an immutable-field change.
func NeedsRecreate(err error) bool {
	var oe *ObjectError
	if errors.As(err, &oe) && oe.Immutable() {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if NeedsRecreate(e) {
				return true
			}
		}
	case interface{ Unwrap() error }:
		return NeedsRecreate(u.Unwrap())
	}
	return false
}

// explain turns ssa's errors into ObjectErrors naming the object and its file.
func explain(err error, batch []*unstructured.Unstructured, sources map[object.ID]string) error {
	var dre *ssaerrors.DryRunErr
	if errors.As(err, &dre) && dre.InvolvedObject() != nil {
		id := object.IDOf(dre.InvolvedObject())
		return &ObjectError{Object: id, Source: sources[id], Err: err}
	}
	// ssa's other errors start with the object's Kind/namespace/name.
	msg := err.Error()
	for _, u := range batch {
		id := object.IDOf(u)
		if strings.HasPrefix(msg, id.String()+" ") || strings.HasPrefix(msg, id.Kind+"/"+id.Name+" ") {
			return &ObjectError{Object: id, Source: sources[id], Err: err}
		}
	}
	return err
}
