package resourceset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	ssautil "github.com/fluxcd/pkg/ssa/utils"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Options are what expanding reads beyond the unit's own objects.
type Options struct {
	// GitHub lists the pull requests, branches and tags of the providers
	// of a GitHub type, with the run's token; nil fails those providers
	// (ErrNoGitHub).
	GitHub GitHub
	// Cache keeps GitHub's answers for the run: every rendering of a
	// unit sees the same ones. Nil asks every time.
	Cache *Cache
	// Lookup reads an object of the cluster for spec.dependsOn (helm's
	// ObjectLookup: an empty map when it does not exist); nil means there
	// is no cluster (an offline rendering): dependencies are not checked,
	// with a note.
	Lookup func(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error)
	// WaitForDependencies is how long a dependency that is not ready is
	// waited for, checked every DependencyInterval (0: 2s); 0 checks once.
	WaitForDependencies time.Duration
	DependencyInterval  time.Duration
}

// Origin is where an object of the unit was read from: its file,
// relative to the repository root, and the file's content, which says
// the lines of its fields ("" and nil: not known).
type Origin struct {
	File string
	Data []byte
}

// Expansion is what the ResourceSets of a unit generate.
type Expansion struct {
	// Sets are the unit's ResourceSets, in order, each with the objects
	// it generates.
	Sets []Set
	// External says some input sets came from outside the repository
	// (GitHub): a build is not the same for the same files.
	External bool
	// Notes say what was read and not acted on, one line each.
	Notes []string
}

// Set is one ResourceSet and the objects it generates.
type Set struct {
	ID      object.ID
	Objects []*unstructured.Unstructured
	// Inputs is how many input sets it was expanded with.
	Inputs int
}

// Generated are every object the ResourceSets generate, in order.
func (e *Expansion) Generated() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, s := range e.Sets {
		out = append(out, s.Objects...)
	}
	return out
}

// Is says whether u is a ResourceSet or a ResourceSetInputProvider: read
// here, never applied.
func Is(u *unstructured.Unstructured) bool {
	gk := u.GroupVersionKind().GroupKind()
	return gk == SetKind || gk == ProviderKind
}

// Expand expands every ResourceSet among objs, reading the
// ResourceSetInputProviders among them (a ResourceSet's providers are
// those of its unit), and returns what each generates. origin says where
// each object came from, for errors. Every ResourceSet's problem is an
// *Error (a dependency not ready, a *DependencyError inside it); all of
// them are joined, and nothing is generated when any.
func Expand(ctx context.Context, objs []*unstructured.Unstructured, origin func(object.ID) Origin, opts Options) (*Expansion, error) {
	var sets []*unstructured.Unstructured
	var providers []*unstructured.Unstructured
	unit := map[object.ID]bool{}
	for _, u := range objs {
		unit[object.IDOf(u)] = true
		switch u.GroupVersionKind().GroupKind() {
		case SetKind:
			sets = append(sets, u)
		case ProviderKind:
			providers = append(providers, u)
		}
	}
	out := &Expansion{}
	if len(sets) == 0 {
		return out, nil
	}
	read, err := readProviders(providers, origin)
	if err != nil {
		return nil, err
	}
	x := &expander{opts: opts, origin: origin, providers: read, unit: unit}
	var errs []error
	generated := map[object.ID]object.ID{}
	for _, u := range sets {
		id := object.IDOf(u)
		s, err := x.expand(ctx, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, g := range s.Objects {
			gid := object.IDOf(g)
			if other, dup := generated[gid]; dup {
				errs = append(errs, x.fail(id, nil, fmt.Errorf("generates %s, which %s generates too", gid, other.String())))
			} else if unit[gid] {
				errs = append(errs, x.fail(id, nil, fmt.Errorf("generates %s, which the unit holds already", gid)))
			}
			generated[gid] = id
		}
		out.Sets = append(out.Sets, s.Set)
		out.External = out.External || s.external
		out.Notes = append(out.Notes, s.notes...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// expander expands the ResourceSets of one unit.
type expander struct {
	opts      Options
	origin    func(object.ID) Origin
	providers []*provider
	unit      map[object.ID]bool
}

// provider is a ResourceSetInputProvider of the unit.
type provider struct {
	id  object.ID
	obj *inputProvider
}

// expanded is what one ResourceSet generated.
type expanded struct {
	Set
	external bool
	notes    []string
	// after are the Flux Kustomizations ("namespace/name") of
	// spec.dependsOn: every Kustomization it generates depends on them.
	after []object.ID
}

// readProviders reads the unit's ResourceSetInputProviders.
func readProviders(objs []*unstructured.Unstructured, origin func(object.ID) Origin) ([]*provider, error) {
	var out []*provider
	var errs []error
	for _, u := range objs {
		p := &inputProvider{}
		if err := decodeStrict(u, p); err != nil {
			id := object.IDOf(u)
			o := origin(id)
			errs = append(errs, &Error{Object: id, File: o.File, Line: locate(o.Data, id, nil), Err: err})
			continue
		}
		p.Spec.DefaultValues = numbers(p.Spec.DefaultValues).(map[string]any)
		out = append(out, &provider{id: object.IDOf(u), obj: p})
	}
	return out, errors.Join(errs...)
}

// fail is the *Error of ResourceSet id, at the field path names (nil: the
// object).
func (x *expander) fail(id object.ID, path []any, err error) error {
	o := x.origin(id)
	return &Error{Object: id, File: o.File, Line: locate(o.Data, id, path), Err: err}
}

// expand expands one ResourceSet.
func (x *expander) expand(ctx context.Context, u *unstructured.Unstructured) (*expanded, error) {
	id := object.IDOf(u)
	rs := &resourceSet{}
	if err := decodeStrict(u, rs); err != nil {
		return nil, x.fail(id, nil, err)
	}
	for i, in := range rs.Spec.Inputs {
		rs.Spec.Inputs[i] = numbers(in).(map[string]any)
	}
	if err := x.refuse(id, u, rs); err != nil {
		return nil, err
	}
	e := &expanded{Set: Set{ID: id}}
	if err := x.checkDependencies(ctx, id, rs, e); err != nil {
		return nil, err
	}
	inputs, err := x.inputs(ctx, id, rs, e)
	if err != nil {
		return nil, err
	}
	e.Inputs = len(inputs)
	if len(rs.Spec.InputsFrom) > 0 && len(inputs) == 0 {
		// The operator applies an empty set, which collects what an
		// earlier reconciliation generated.
		return e, nil
	}
	objs, err := x.build(id, rs, inputs)
	if err != nil {
		return nil, err
	}
	for _, g := range objs {
		if err := x.refuseGenerated(id, g); err != nil {
			return nil, err
		}
		if err := x.copyFrom(ctx, id, g, e); err != nil {
			return nil, err
		}
	}
	// As the operator's controller: its owner labels, then the common
	// metadata, which may override them.
	ssautil.SetCommonMetadata(objs, map[string]string{ownerNameLabel: id.Name, ownerNamespaceLabel: id.Namespace}, nil)
	if cm := rs.Spec.CommonMetadata; cm != nil {
		ssautil.SetCommonMetadata(objs, cm.Labels, cm.Annotations)
	}
	if err := x.orderAfter(id, e, objs); err != nil {
		return nil, err
	}
	e.Objects = objs
	return e, nil
}

// refuse fails a ResourceSet using what a run does not honour.
func (x *expander) refuse(id object.ID, u *unstructured.Unstructured, rs *resourceSet) error {
	switch {
	case len(rs.Spec.Steps) > 0:
		return x.fail(id, []any{"spec", "steps"}, errors.New("spec.steps is not honoured: a unit applies all its objects together and waits for them at the end, it does not apply and wait step by step"))
	case rs.Spec.ServiceAccountName != "":
		return x.fail(id, []any{"spec", "serviceAccountName"}, errors.New("spec.serviceAccountName is not honoured: the objects it generates are applied as the unit's own identity (its Kustomization's spec.serviceAccountName), not as this service account"))
	case strings.EqualFold(u.GetAnnotations()[reconcileAnnotation], disabledValue):
		return x.fail(id, []any{"metadata", "annotations"}, fmt.Errorf("%s: disabled is not honoured: a run cannot keep what an earlier reconciliation generated as it was; suspend the unit instead", reconcileAnnotation))
	case len(rs.Spec.Resources) == 0 && rs.Spec.ResourcesTemplate == "":
		return x.fail(id, []any{"spec"}, errors.New("spec: neither resources nor resourcesTemplate is set"))
	}
	for i, ref := range rs.Spec.InputsFrom {
		path := []any{"spec", "inputsFrom", i}
		switch {
		case ref.APIVersion != "" && ref.APIVersion != Group+"/v1":
			return x.fail(id, path, fmt.Errorf("spec.inputsFrom[%d].apiVersion %q: not %s/v1", i, ref.APIVersion, Group))
		case ref.Kind != "" && ref.Kind != ProviderKind.Kind:
			return x.fail(id, path, fmt.Errorf("spec.inputsFrom[%d].kind %q: not %s", i, ref.Kind, ProviderKind.Kind))
		case (ref.Name == "") == (ref.Selector == nil):
			return x.fail(id, path, fmt.Errorf("spec.inputsFrom[%d]: exactly one of name and selector must be set", i))
		}
	}
	return nil
}

// Annotations of the operator's that read the cluster when it applies a
// generated object and that a run does not honour: refused, since a run
// would apply the object without what they add. copyFrom is honoured
// (see copyFrom).
var clusterAnnotations = []string{Group + "/convertKubeConfigFrom", Group + "/checksumFrom"}

// refuseGenerated fails a ResourceSet that generates an object asking
// for what a run does not do.
func (x *expander) refuseGenerated(id object.ID, g *unstructured.Unstructured) error {
	for _, a := range clusterAnnotations {
		if _, ok := g.GetAnnotations()[a]; ok {
			return x.fail(id, nil, fmt.Errorf("generates %s with the annotation %s, which is not honoured: it copies data from the cluster when the operator applies it", object.IDOf(g), a))
		}
	}
	return nil
}

// inputs are the ResourceSet's input sets, combined.
func (x *expander) inputs(ctx context.Context, id object.ID, rs *resourceSet, e *expanded) ([]map[string]any, error) {
	self := source{apiVersion: Group + "/v1", kind: SetKind.Kind, namespace: id.Namespace, name: id.Name, inputs: rs.Spec.Inputs}
	var sources []source
	seen := map[object.ID]bool{}
	for i, ref := range rs.Spec.InputsFrom {
		found, err := x.selectProviders(id, ref)
		if err != nil {
			return nil, x.fail(id, []any{"spec", "inputsFrom", i}, fmt.Errorf("spec.inputsFrom[%d]: %w", i, err))
		}
		for _, p := range found {
			if seen[p.id] {
				continue
			}
			seen[p.id] = true
			sets, external, err := providerInputs(ctx, p.obj, x.opts)
			e.external = e.external || external
			if err != nil {
				o := x.origin(p.id)
				return nil, &Error{Object: p.id, File: o.File, Line: locate(o.Data, p.id, nil), Err: fmt.Errorf("an input provider of %s: %w", id.String(), err)}
			}
			if p.obj.Spec.SecretRef != nil {
				e.notes = append(e.notes, fmt.Sprintf("%s: spec.secretRef not read: GitHub is asked with the run's own token", p.id))
			}
			sources = append(sources, source{apiVersion: Group + "/v1", kind: ProviderKind.Kind, namespace: p.id.Namespace, name: p.id.Name, inputs: sets})
		}
	}
	strategy, includeEmpty := "", false
	if s := rs.Spec.InputStrategy; s != nil {
		strategy, includeEmpty = s.Name, s.IncludeEmptyProviders
		if includeEmpty && s.Name != strategyPermute {
			return nil, x.fail(id, []any{"spec", "inputStrategy"}, errors.New("spec.inputStrategy.includeEmptyProviders: only with name Permute"))
		}
	}
	sets, err := combine(self, sources, strategy, includeEmpty)
	if err != nil {
		return nil, x.fail(id, []any{"spec", "inputStrategy"}, err)
	}
	return sets, nil
}

// selectProviders are the unit's providers ref names, in the
// ResourceSet's namespace: by name (which must be there), or by selector.
func (x *expander) selectProviders(id object.ID, ref providerRef) ([]*provider, error) {
	if ref.Name != "" {
		for _, p := range x.providers {
			if p.id.Namespace == id.Namespace && p.id.Name == ref.Name {
				return []*provider{p}, nil
			}
		}
		return nil, fmt.Errorf("no ResourceSetInputProvider %s/%s in the unit (a ResourceSet reads the providers its own unit holds)", id.Namespace, ref.Name)
	}
	sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector: %w", err)
	}
	var out []*provider
	for _, p := range x.providers {
		if p.id.Namespace == id.Namespace && sel.Matches(labels.Set(p.obj.Metadata.Labels)) {
			out = append(out, p)
		}
	}
	return out, nil
}

// build executes the ResourceSet's templates once per input set (once
// with no inputs when there are none) as the operator builds them:
// spec.resources first, then the objects of spec.resourcesTemplate; an
// object annotated fluxcd.controlplane.io/reconcile: disabled is left
// out, and of objects with the same group, kind, namespace and name the
// first is kept.
func (x *expander) build(id object.ID, rs *resourceSet, inputs []map[string]any) ([]*unstructured.Unstructured, error) {
	b := &budget{left: maxOutput}
	var out []*unstructured.Unstructured
	keys := map[string]bool{}
	add := func(u *unstructured.Unstructured, filter bool) {
		key := strings.Join([]string{u.GroupVersionKind().Group, u.GetKind(), u.GetNamespace(), u.GetName()}, "/")
		if filter {
			if strings.EqualFold(u.GetAnnotations()[reconcileAnnotation], disabledValue) || keys[key] {
				return
			}
		}
		keys[key] = true
		out = append(out, u)
	}
	runs := inputs
	if len(runs) == 0 {
		runs = []map[string]any{nil}
	}
	for i, raw := range rs.Spec.Resources {
		path, field := []any{"spec", "resources", i}, fmt.Sprintf("spec.resources[%d]", i)
		t, err := parseResource(raw)
		if err != nil {
			return nil, x.templateError(id, path, field, false, -1, nil, 0, err)
		}
		for n, in := range runs {
			u, err := t.object(in, b)
			if err != nil {
				return nil, x.templateError(id, path, field, false, n, in, len(inputs), err)
			}
			add(u, len(inputs) > 0)
		}
	}
	if rs.Spec.ResourcesTemplate != "" {
		path, field := []any{"spec", "resourcesTemplate"}, "spec.resourcesTemplate"
		t, err := parse(rs.Spec.ResourcesTemplate)
		if err != nil {
			return nil, x.templateError(id, path, field, true, -1, nil, 0, err)
		}
		for n, in := range runs {
			objs, err := t.objects(in, b)
			if err != nil {
				return nil, x.templateError(id, path, field, true, n, in, len(inputs), err)
			}
			for _, u := range objs {
				add(u, true)
			}
			if len(out) > maxObjects {
				return nil, x.fail(id, path, fmt.Errorf("generates more than %d objects", maxObjects))
			}
		}
	}
	if len(out) > maxObjects {
		return nil, x.fail(id, nil, fmt.Errorf("generates more than %d objects", maxObjects))
	}
	return out, nil
}

// templateError is the error of the template at path (field names it),
// executed with input set n of count (n -1: parsing it): for
// spec.resourcesTemplate (block) at the file's line of the template's
// failing line when its file says it.
func (x *expander) templateError(id object.ID, path []any, field string, block bool, n int, in map[string]any, count int, err error) error {
	o := x.origin(id)
	at := locate(o.Data, id, path)
	var out *outputError
	msg := err.Error()
	line := 0
	if !errors.As(err, &out) && !errors.Is(err, errTooLarge) {
		line, msg = lineOf(err)
	}
	where := field
	if line > 0 {
		where = fmt.Sprintf("%s line %d", field, line)
		if block && at > 0 && isBlock(o.Data, id, path) {
			at += line
		}
	}
	if n >= 0 && count > 0 {
		inputID, _ := in["id"].(string)
		where += fmt.Sprintf(" (input set %d of %d", n+1, count)
		if inputID != "" {
			where += ", id " + inputID
		}
		where += ")"
	}
	return &Error{Object: id, File: o.File, Line: at, Err: fmt.Errorf("%s: %s", where, msg)}
}

// numbers turns the json.Numbers decodeStrict leaves into int64 when they
// are integers, else float64, as the operator's decoder reads inputs
// (k8s.io/apimachinery's json).
func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		if t == nil {
			return map[string]any(nil)
		}
		for k, e := range t {
			t[k] = numbers(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
		return t
	}
	return v
}
