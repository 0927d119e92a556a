package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"github.com/pmezard/go-difflib/difflib"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Diff works out, with server-side dry-runs and without writing anything,
// what Apply would do to each object, with a unified YAML diff per created or
// configured object. Secret values are masked. Objects in a Namespace, or of
// a kind, that the same build creates cannot be dry-run yet; they count as
// created. Failures are entries too (action failed); the returned error
// joins them.
func Diff(ctx context.Context, m *ssa.ResourceManager, objs []*unstructured.Unstructured, opts Options) ([]result.Entry, error) {
	do := ssa.DiffOptions{
		Exclusions:           kdSelector(ssaIgnore),
		IfNotPresentSelector: kdSelector(ssaIfNotPresent),
		Force:                opts.Force,
		ForceSelector:        kdSelector(forceEnabled),
	}
	inBuild := newBuildIndex(objs)
	byStage := stages(objs)
	var ordered []*unstructured.Unstructured
	var stageOf []result.Stage
	for _, stage := range stageOrder {
		for _, u := range byStage[stage] {
			ordered = append(ordered, u)
			stageOf = append(stageOf, stage)
		}
	}
	// Dry-runs are independent reads: run them concurrently, keep the order.
	entries := make([]result.Entry, len(ordered))
	errs := make([]error, len(ordered))
	sem := make(chan struct{}, diffConcurrency)
	var wg sync.WaitGroup
	for i, u := range ordered {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			entries[i], errs[i] = diffOne(ctx, m, u, stageOf[i], do, inBuild, opts.Sources)
		}()
	}
	wg.Wait()
	return entries, errors.Join(errs...)
}

// diffConcurrency bounds the dry-runs in flight; the client's rate limit
// still applies on top.
const diffConcurrency = 8

func diffOne(ctx context.Context, m *ssa.ResourceManager, u *unstructured.Unstructured, stage result.Stage, do ssa.DiffOptions, inBuild buildIndex, sources map[object.ID]string) (result.Entry, error) {
	id := object.IDOf(u)
	e := result.Entry{Object: id, Version: u.GetAPIVersion(), Source: sources[id], Stage: stage}
	cse, live, merged, err := m.Diff(ctx, u.DeepCopy(), do)
	switch {
	case err != nil && inBuild.createsPrerequisite(u, err):
		e.Action = result.Created
		e.Diff = UnifiedDiff(id, nil, u)
	case err != nil:
		oe := &ObjectError{Object: id, Source: e.Source, Err: err}
		e.Action, e.Reason = result.Failed, oe.Error()
		return e, oe
	default:
		e.Action = result.Action(cse.Action)
		switch e.Action {
		case result.Created:
			e.Diff = UnifiedDiff(id, nil, u)
		case result.Configured:
			e.Diff = UnifiedDiff(id, live, merged)
		}
	}
	return e, nil
}

// buildIndex knows which Namespaces and CRD-defined kinds a build creates.
type buildIndex struct {
	namespaces map[string]bool
	kinds      map[string]bool // group/kind
}

func newBuildIndex(objs []*unstructured.Unstructured) buildIndex {
	ix := buildIndex{namespaces: map[string]bool{}, kinds: map[string]bool{}}
	for _, u := range objs {
		switch {
		case utils.IsNamespace(u):
			ix.namespaces[u.GetName()] = true
		case utils.IsCRD(u):
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			ix.kinds[group+"/"+kind] = true
		}
	}
	return ix
}

// createsPrerequisite reports whether err only says that u's Namespace or
// kind does not exist yet while the build creates it.
func (ix buildIndex) createsPrerequisite(u *unstructured.Unstructured, err error) bool {
	gvk := u.GroupVersionKind()
	if ix.kinds[gvk.Group+"/"+gvk.Kind] && (meta.IsNoMatchError(err) || strings.Contains(err.Error(), "no matches for kind")) {
		return true
	}
	return ix.namespaces[u.GetNamespace()] && apierrors.IsNotFound(err)
}

// UnifiedDiff renders a unified diff of two objects as YAML, after removing
// server-managed noise and masking Secret values. A nil before is creation.
func UnifiedDiff(id object.ID, before, after *unstructured.Unstructured) string {
	after = clean(after)
	var a string
	if before != nil {
		before = clean(before)
		maskSecrets(before, after)
		a = toYAML(before)
	} else {
		maskSecrets(nil, after)
	}
	var aLines []string // none for a new object, not one empty line
	if a != "" {
		aLines = difflib.SplitLines(a)
	}
	text, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        aLines,
		B:        difflib.SplitLines(toYAML(after)),
		FromFile: id.String() + " (live)",
		ToFile:   id.String() + " (desired)",
		Context:  3,
	})
	return text
}

func clean(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	for _, f := range [][]string{
		{"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "uid"},
		{"metadata", "generation"}, {"metadata", "creationTimestamp"}, {"status"},
	} {
		unstructured.RemoveNestedField(u.Object, f...)
	}
	return u
}

func toYAML(u *unstructured.Unstructured) string {
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		return fmt.Sprintf("# cannot render: %v\n", err)
	}
	return string(data)
}
