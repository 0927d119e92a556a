package apply

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func invalid(kind, name string, errs ...*field.Error) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: kind}, name, field.ErrorList(errs))
}

// Only a field that cannot change calls for recreating the object; other
// invalid objects (too large, a bad value) must not be told to use force.
func TestImmutableIsOnlyImmutable(t *testing.T) {
	t.Parallel()
	cm := object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "big"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"job template", invalid("Job", "migrate", field.Invalid(field.NewPath("spec", "template"), "x", "field is immutable")), true},
		{"service clusterIP", invalid("Service", "web", field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), "10.0.0.1", "may not change once set")), true},
		{"statefulset spec", invalid("StatefulSet", "db", field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas' are forbidden")), true},
		{"too long", invalid("ConfigMap", "big", field.TooLong(field.NewPath("data"), "", 1048576)), false},
		{"bad value", invalid("ConfigMap", "big", field.Invalid(field.NewPath("data", "port"), 80, "must be a string")), false},
		{"not invalid", errors.New("connection refused"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			oe := &ObjectError{Object: cm, Source: "big.yaml", Err: tc.err}
			if got := oe.Immutable(); got != tc.want {
				t.Errorf("Immutable() = %v, want %v for %v", got, tc.want, tc.err)
			}
			if got := strings.Contains(oe.Error(), "must be recreated"); got != tc.want {
				t.Errorf("message %q suggests recreating: %v, want %v", oe.Error(), got, tc.want)
			}
			joined := fmt.Errorf("dry-run: %w", errors.Join(errors.New("other"), oe))
			if got := NeedsRecreate(joined); got != tc.want {
				t.Errorf("NeedsRecreate(joined) = %v, want %v", got, tc.want)
			}
		})
	}
}

// Messages name neither a flag nor an input: the front end names its own.
func TestObjectErrorNamesNoFlag(t *testing.T) {
	t.Parallel()
	err := &ObjectError{Object: object.ID{Kind: "Job", Name: "x"}, Err: apierrors.NewForbidden(schema.GroupResource{Resource: "jobs"}, "x", errors.New("no"))}
	if msg := err.Error(); strings.Contains(msg, "--") || !strings.Contains(msg, "lacks RBAC permission") {
		t.Errorf("message %q", msg)
	}
}
