package apply

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	err := &ObjectError{Object: object.ID{Kind: "Job", Name: "x"}, Err: apierrors.NewForbidden(schema.GroupResource{Resource: "jobs"}, "x",
		errors.New(`User "system:serviceaccount:ns:deployer" cannot patch resource "jobs" in API group "batch" in the namespace "ns"`))}
	if msg := err.Error(); strings.Contains(msg, "--") || !strings.Contains(msg, "lacks RBAC permission") {
		t.Errorf("message %q", msg)
	}
}

// terminatingErr is the NamespaceLifecycle admission's refusal of a
// create in a namespace being deleted.
func terminatingErr(ns string) error {
	err := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "settings",
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: corev1.NamespaceTerminatingCause, Message: "namespace " + ns + " is being terminated", Field: "metadata.namespace"})
	return err
}

// A 403 says what refused it: a namespace being deleted, a quota, Pod
// Security or RBAC each have their own cure; a refusal the message does
// not explain (a webhook's) is not blamed on RBAC.
func TestForbiddenNamesItsCause(t *testing.T) {
	t.Parallel()
	cm := object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "settings"}
	forbidden := func(msg string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "settings", errors.New(msg))
	}
	for _, tc := range []struct {
		name string
		err  error
		want string // the explanation after the server's message; "" for none
	}{
		{"RBAC", forbidden(`User "system:serviceaccount:shop:deployer" cannot patch resource "configmaps" in API group "" in the namespace "shop"`),
			"; the identity applying (the service account, if one is set) lacks RBAC permission for this"},
		{"namespace being deleted", terminatingErr("shop"),
			"; namespace shop is being deleted (a delete that has not finished, its objects' finalizers running): nothing can be created in it until it is gone"},
		{"namespace being deleted, wrapped by ssa", fmt.Errorf("dry-run failed: %w", terminatingErr("shop")),
			"; namespace shop is being deleted (a delete that has not finished, its objects' finalizers running): nothing can be created in it until it is gone"},
		{"quota", forbidden("exceeded quota: small, requested: configmaps=1, used: configmaps=1, limited: configmaps=1"),
			"; a ResourceQuota of namespace shop refuses it: raise the quota, or lower what the object asks for"},
		{"quota without limits", forbidden("failed quota: small: must specify limits.cpu for: web"),
			"; a ResourceQuota of namespace shop refuses it: raise the quota, or lower what the object asks for"},
		{"Pod Security", forbidden(`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`),
			"; the Pod Security admission of namespace shop refuses the pod (its pod-security.kubernetes.io/enforce label): make the pod meet that level, or lower the level"},
		{"a webhook's refusal", forbidden(`admission webhook "policy.example.com" denied the request: no latest tags`), ""},
		{"not forbidden", errors.New("connection refused"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			oe := &ObjectError{Object: cm, Source: "settings.yaml", Err: tc.err}
			want := "ConfigMap/shop/settings (settings.yaml): " + tc.err.Error() + tc.want
			if got := oe.Error(); got != want {
				t.Errorf("message\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// The namespaces a run waits for are those object errors say are being
// deleted, once each.
func TestTerminatingNamespaces(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("dry-run: %w", errors.Join(
		&ObjectError{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "a"}, Err: terminatingErr("shop")},
		&ObjectError{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "b"}, Err: terminatingErr("shop")},
		&ObjectError{Object: object.ID{Kind: "ConfigMap", Namespace: "cart", Name: "c"}, Err: terminatingErr("cart")},
		&ObjectError{Object: object.ID{Kind: "ConfigMap", Namespace: "web", Name: "d"}, Err: errors.New("connection refused")},
	))
	if diff := cmp.Diff([]string{"cart", "shop"}, TerminatingNamespaces(err)); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
	if got := TerminatingNamespaces(errors.New("boom")); len(got) != 0 {
		t.Errorf("namespaces %v in an error without any", got)
	}
}

// The failures of many objects say each cause once; a missing namespace
// says so in words, not as a NotFound of the object.
func TestObjectErrorsGroupCauses(t *testing.T) {
	t.Parallel()
	var errs []error
	for i := range 4 {
		id := object.ID{Kind: "ConfigMap", Namespace: "argocd", Name: fmt.Sprintf("cm-%d", i)}
		errs = append(errs, &ObjectError{Object: id, Source: "install.yaml", Err: fmt.Errorf("%s not found: %w", id, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "argocd"))}, nil)
	}
	errs = append(errs, &ObjectError{Object: object.ID{Kind: "Secret", Namespace: "default", Name: "s"}, Err: errors.New("too large")})
	err := joinObjectErrors(errs)
	want := "namespace argocd not found, and this unit does not create it — 4 objects, e.g. ConfigMap/argocd/cm-0 (install.yaml), ConfigMap/argocd/cm-1 (install.yaml), ConfigMap/argocd/cm-2 (install.yaml) and 1 more\n" +
		"Secret/default/s: too large"
	if err == nil || err.Error() != want {
		t.Errorf("message\n%v\nwant\n%s", err, want)
	}
	var oe *ObjectError
	if !errors.As(err, &oe) || len(objectErrors(err)) != 5 {
		t.Errorf("the object errors are not reachable: %d of 5", len(objectErrors(err)))
	}
}
