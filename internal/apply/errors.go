package apply

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	ssaerrors "github.com/fluxcd/pkg/ssa/errors"
	corev1 "k8s.io/api/core/v1"
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
	return e.located().String() + ": " + e.Cause()
}

func (e *ObjectError) located() object.Located {
	return object.Located{ID: e.Object, Source: e.Source}
}

// Cause says why the object failed without naming it: what its entry
// reports, and what objects that failed alike share.
func (e *ObjectError) Cause() string {
	// ssa's messages already start with the object; say it once.
	msg := strings.TrimPrefix(e.Err.Error(), e.Object.String()+" ")
	if e.missingNamespace() {
		msg = "namespace " + e.Object.Namespace + " not found, and this unit does not create it"
	}
	if e.Immutable() {
		msg += "; the field is immutable: the object must be recreated (force, or the annotation kustomize-deploy.dev/force: enabled)"
	}
	return msg + forbiddenBecause(e.Object, e.Err)
}

// missingNamespace reports whether the object failed because its
// namespace does not exist (had the unit created it, the dry-run would
// not have sent the object).
func (e *ObjectError) missingNamespace() bool {
	var status apierrors.APIStatus
	if e.Object.Namespace == "" || !apierrors.IsNotFound(e.Err) || !errors.As(e.Err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Kind == "namespaces" && d.Name == e.Object.Namespace
}

// ObjectErrors are the failures of several objects. Its message names
// each cause once, with the objects that share it: one missing namespace
// of fifty objects is one line, not fifty.
type ObjectErrors []*ObjectError

func (e ObjectErrors) Error() string {
	failures := make([]object.Failure, len(e))
	for i, oe := range e {
		failures[i] = object.Failure{Located: oe.located(), Cause: oe.Cause()}
	}
	groups := object.ByCause(failures)
	lines := make([]string, len(groups))
	for i, g := range groups {
		lines[i] = g.String()
	}
	return strings.Join(lines, "\n")
}

func (e ObjectErrors) Unwrap() []error {
	out := make([]error, len(e))
	for i, oe := range e {
		out[i] = oe
	}
	return out
}

// joinObjectErrors joins errs (nil ones left out), the object errors
// among them as ObjectErrors.
func joinObjectErrors(errs []error) error {
	var objs ObjectErrors
	var others []error
	for _, err := range errs {
		if oe, ok := err.(*ObjectError); ok {
			objs = append(objs, oe)
		} else if err != nil {
			others = append(others, err)
		}
	}
	if len(objs) > 0 {
		others = append(others, objs)
	}
	return errors.Join(others...)
}

// forbiddenBecause explains a 403 Forbidden by what refused it: each
// cause has its own cure, and a lack of RBAC permission is only one of
// them. It is empty for other errors and for refusals it does not know.
func forbiddenBecause(id object.ID, err error) string {
	if !apierrors.IsForbidden(err) {
		return ""
	}
	msg := err.Error()
	switch {
	case terminating(err):
		return fmt.Sprintf("; namespace %s is being deleted (a delete that has not finished, its objects' finalizers running): nothing can be created in it until it is gone", id.Namespace)
	case strings.Contains(msg, "exceeded quota") || strings.Contains(msg, "failed quota") || strings.Contains(msg, "status unknown for quota"):
		return "; a ResourceQuota of namespace " + id.Namespace + " refuses it: raise the quota, or lower what the object asks for"
	case strings.Contains(msg, "violates PodSecurity"):
		return "; the Pod Security admission of namespace " + id.Namespace + " refuses the pod (its pod-security.kubernetes.io/enforce label): make the pod meet that level, or lower the level"
	case rbacDenied.MatchString(msg):
		return "; the identity applying (the service account, if one is set) lacks RBAC permission for this"
	}
	return ""
}

// RBACForbidden reports whether err is RBAC refusing the identity a
// request (not a quota, an admission or a terminating namespace).
func RBACForbidden(err error) bool { return rbacForbidden(err) }

func rbacForbidden(err error) bool {
	return apierrors.IsForbidden(err) && !terminating(err) && rbacDenied.MatchString(err.Error())
}

// rbacDenied is how the RBAC authorizer refuses: User "…" cannot patch
// resource "configmaps" in API group "" in the namespace "…".
var rbacDenied = regexp.MustCompile(`cannot [a-z]+ resource`)

// terminating reports whether err refuses a create because the object's
// namespace is being deleted (the NamespaceLifecycle admission).
func terminating(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			if c.Type == corev1.NamespaceTerminatingCause {
				return true
			}
		}
	}
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "because it is being terminated")
}

// TerminatingNamespaces returns, sorted, the namespaces that object errors
// in err (joined errors included) say are being deleted: a run right
// after a delete meets them, and waits for them to be gone.
func TerminatingNamespaces(err error) []string {
	seen := map[string]bool{}
	for _, oe := range objectErrors(err) {
		if terminating(oe.Err) && oe.Object.Namespace != "" {
			seen[oe.Object.Namespace] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// objectErrors are the ObjectErrors in err, joined errors included.
func objectErrors(err error) []*ObjectError {
	switch u := err.(type) {
	case nil:
		return nil
	case *ObjectError:
		return []*ObjectError{u}
	case interface{ Unwrap() []error }:
		var out []*ObjectError
		for _, e := range u.Unwrap() {
			out = append(out, objectErrors(e)...)
		}
		return out
	case interface{ Unwrap() error }:
		return objectErrors(u.Unwrap())
	}
	return nil
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
	return slices.ContainsFunc(objectErrors(err), (*ObjectError).Immutable)
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
