package resourceset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/runtime/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// A ResourceSet's spec.dependsOn is checked as the operator checks it
// before expanding: each object must exist in the cluster; with ready,
// be ready (its readyExpr, a CEL expression over the object, when set; a
// ResourceSet's or ResourceSetInputProvider's Ready condition true at its
// generation; else kstatus Current); the kubectl last-applied annotation
// is hidden from expressions, and so is a Secret's data outside the
// ResourceSet's namespace. What a run changes:
//
//   - a dependency that is an object of the same unit (the unit applies it
//     with the generated objects, definitions and namespaces first) or
//     another ResourceSet of the unit (expanded in the same run) is met,
//     with a note: the unit waits for every object it applies at the end,
//     not for this one before the others;
//   - a Flux Kustomization is a unit of the configuration, never an object
//     of the cluster: it is added to the spec.dependsOn of every
//     Kustomization the ResourceSet generates (in the ResourceSet's
//     namespace when it names none), so that those units run once it is
//     ready, with a note; the ResourceSet's other objects are applied with
//     its unit, which does not wait for it (order that unit's own
//     Kustomization after it for that);
//   - a ResourceSet or ResourceSetInputProvider outside the unit is never
//     in the cluster (a run does not apply them): the dependency fails,
//     naming it; order the units with their Kustomizations' dependsOn;
//   - with no cluster (an offline rendering) nothing is checked, with a
//     note;
//   - a dependency not met is checked again every DependencyInterval for
//     WaitForDependencies (the unit's wait for dependencies), then fails
//     the unit with DependencyNotReady.

// checkDependencies checks rs's spec.dependsOn.
func (x *expander) checkDependencies(ctx context.Context, id object.ID, rs *resourceSet, e *expanded) error {
	if len(rs.Spec.DependsOn) == 0 {
		return nil
	}
	exprs := make([]*cel.Expression, len(rs.Spec.DependsOn))
	var pending []int
	for i, dep := range rs.Spec.DependsOn {
		path := []any{"spec", "dependsOn", i}
		if dep.APIVersion == "" || dep.Kind == "" || dep.Name == "" {
			return x.fail(id, path, fmt.Errorf("spec.dependsOn[%d]: apiVersion, kind and name are required", i))
		}
		if dep.Ready && dep.ReadyExpr != "" {
			expr, err := cel.NewExpression(dep.ReadyExpr)
			if err != nil {
				return x.fail(id, path, fmt.Errorf("spec.dependsOn[%d].readyExpr: %w", i, err))
			}
			exprs[i] = expr
		}
		gv, err := schema.ParseGroupVersion(dep.APIVersion)
		if err != nil {
			return x.fail(id, path, fmt.Errorf("spec.dependsOn[%d].apiVersion: %w", i, err))
		}
		depID := object.ID{Group: gv.Group, Kind: dep.Kind, Namespace: dep.Namespace, Name: dep.Name}
		operatorKind := gv.Group == Group && (dep.Kind == SetKind.Kind || dep.Kind == ProviderKind.Kind)
		switch {
		case depID.Group == kustomizationKind.Group && depID.Kind == kustomizationKind.Kind:
			depID.Namespace = cmp.Or(depID.Namespace, id.Namespace)
			e.after = append(e.after, depID)
			if dep.ReadyExpr != "" {
				e.notes = append(e.notes, fmt.Sprintf("%s: spec.dependsOn[%d].readyExpr not evaluated: the unit of Kustomization %s/%s being ready stands in for it", id, i, depID.Namespace, depID.Name))
			}
		case x.unit[depID]:
			e.notes = append(e.notes, fmt.Sprintf("%s: dependsOn %s is met: it is in the same unit, applied with what this ResourceSet generates", id, depID))
		case operatorKind:
			return x.fail(id, path, &DependencyError{Dependency: describe(dep), Err: errors.New("it is not in this unit, and a run expands ResourceSets in the unit holding them and never applies them: make this unit's Kustomization dependsOn the one holding it")})
		case x.opts.Lookup == nil:
			e.notes = append(e.notes, fmt.Sprintf("%s: dependsOn %s not checked: there is no cluster to read it from", id, depID))
		default:
			pending = append(pending, i)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	interval := x.opts.DependencyInterval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	deadline := time.Now().Add(x.opts.WaitForDependencies)
	for {
		var errs []error
		left := pending[:0:0]
		for _, i := range pending {
			if err := x.dependencyMet(ctx, id, rs.Spec.DependsOn[i], exprs[i]); err != nil {
				var d *DependencyError
				if !errors.As(err, &d) {
					return x.fail(id, []any{"spec", "dependsOn", i}, err)
				}
				errs = append(errs, x.fail(id, []any{"spec", "dependsOn", i}, err))
				left = append(left, i)
			}
		}
		if len(left) == 0 {
			return nil
		}
		pending = left
		if !time.Now().Add(interval).Before(deadline) {
			return errors.Join(errs...)
		}
		select {
		case <-ctx.Done():
			return errors.Join(append(errs, ctx.Err())...)
		case <-time.After(interval):
		}
	}
}

// kustomizationKind is Flux's Kustomization.
var kustomizationKind = schema.GroupKind{Group: "kustomize.toolkit.fluxcd.io", Kind: "Kustomization"}

// orderAfter adds e.after to the spec.dependsOn of the Kustomizations
// among objs (what ResourceSet id generates), with a note.
func (x *expander) orderAfter(id object.ID, e *expanded, objs []*unstructured.Unstructured) error {
	if len(e.after) == 0 {
		return nil
	}
	var names []string
	for _, a := range e.after {
		names = append(names, a.Namespace+"/"+a.Name)
	}
	n := 0
	for _, u := range objs {
		if u.GroupVersionKind().GroupKind() != kustomizationKind {
			continue
		}
		deps, _, err := unstructured.NestedSlice(u.Object, "spec", "dependsOn")
		if err != nil {
			return x.fail(id, nil, fmt.Errorf("generates %s: spec.dependsOn: %w", object.IDOf(u), err))
		}
		for _, a := range e.after {
			deps = append(deps, map[string]any{"name": a.Name, "namespace": a.Namespace})
		}
		if err := unstructured.SetNestedSlice(u.Object, deps, "spec", "dependsOn"); err != nil {
			return x.fail(id, nil, err)
		}
		n++
	}
	e.notes = append(e.notes, fmt.Sprintf("%s: dependsOn Kustomization %s: added to the dependsOn of the %d Kustomization(s) it generates; its other objects are applied with its unit, which does not wait for it", id, strings.Join(names, ", "), n))
	return nil
}

// dependencyMet reads dep from the cluster and says why it is not met (a
// *DependencyError), nil when it is; another error is a failure to ask.
func (x *expander) dependencyMet(ctx context.Context, id object.ID, dep dependency, expr *cel.Expression) error {
	obj, err := x.opts.Lookup(ctx, dep.APIVersion, dep.Kind, dep.Namespace, dep.Name)
	if err != nil {
		return fmt.Errorf("dependency %s: %w", describe(dep), err)
	}
	if len(obj) == 0 {
		return &DependencyError{Dependency: describe(dep), Err: errors.New("not found")}
	}
	u := &unstructured.Unstructured{Object: obj}
	unstructured.RemoveNestedField(u.Object, "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")
	if dep.Namespace != id.Namespace && u.GetAPIVersion() == "v1" && u.GetKind() == "Secret" {
		unstructured.RemoveNestedField(u.Object, "data")
	}
	if !dep.Ready {
		return nil
	}
	switch {
	case expr != nil:
		ok, err := expr.EvaluateBoolean(ctx, u.Object)
		if err != nil {
			return &DependencyError{Dependency: describe(dep), Err: fmt.Errorf("readyExpr: %w", err)}
		}
		if !ok {
			return &DependencyError{Dependency: describe(dep), Err: fmt.Errorf("not ready: readyExpr %q is false", strings.TrimSpace(dep.ReadyExpr))}
		}
	default:
		res, err := status.Compute(u)
		if err != nil {
			return &DependencyError{Dependency: describe(dep), Err: fmt.Errorf("not ready: %w", err)}
		}
		if res.Status != status.CurrentStatus {
			return &DependencyError{Dependency: describe(dep), Err: fmt.Errorf("not ready: status %s: %s", res.Status, res.Message)}
		}
	}
	return nil
}

// describe names dep as the operator does: apiVersion/Kind/namespace/name.
func describe(dep dependency) string {
	if dep.Namespace == "" {
		return dep.APIVersion + "/" + dep.Kind + "/" + dep.Name
	}
	return dep.APIVersion + "/" + dep.Kind + "/" + dep.Namespace + "/" + dep.Name
}
