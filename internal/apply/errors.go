package apply

import (
	"errors"
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
	if ssaerrors.IsImmutableError(e.Err) {
		msg += "; the field is immutable: run with --force, or annotate the object kustomize-deploy.dev/force: enabled, to recreate it"
	}
	if apierrors.IsForbidden(e.Err) {
		msg += "; the identity applying (see --service-account) lacks RBAC permission for this"
	}
	return msg
}

func (e *ObjectError) Unwrap() error { return e.Err }

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
