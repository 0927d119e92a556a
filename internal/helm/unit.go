package helm

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

// chartFile makes a directory a chart.
const chartFile = "Chart.yaml"

// IsChart reports whether dir is a chart a unit renders: it holds
// Chart.yaml and no kustomization (a kustomization says how to build the
// directory, and wins).
func IsChart(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, chartFile)); err != nil || fi.IsDir() {
		return false
	}
	return !slices.ContainsFunc(konfig.RecognizedKustomizationFileNames(), func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	})
}

// ThisRepository is the GitRepository a unit that is a chart takes it
// from when its Kustomization names none: flux-system/flux-system, the
// name Flux's bootstrap gives the repository it syncs.
var ThisRepository = Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "flux-system"}

// UnitChart is a unit whose path is a chart (see IsChart).
type UnitChart struct {
	// Name is the unit's: the release's name. Namespace is the unit's
	// target namespace (its Kustomization's, else the run's): the
	// release's.
	Name, Namespace string
	// Build are the unit's build options: Root and Path (the chart, in a
	// scratch copy of the checkout), and the transformations of its
	// Kustomization, which become the release's (see UnitRelease).
	Build build.Options
	// Source is the GitRepository that is this repository (the unit's
	// Kustomization's sourceRef, else ThisRepository).
	Source Reference
}

// UnitRelease is the build of a unit whose path is a chart: one
// HelmRelease, from the file Chart.yaml, that Expand renders as any other,
// so the chart's objects go through the unit's pipeline as a
// HelmRelease's do. The release is named as the unit, in the unit's
// target namespace; its values are the chart's values.yaml with, when the
// chart directory holds one, values-<unit>.yaml merged on top. The
// Kustomization's commonMetadata, images and patches become the release's
// commonMetadata and post-renderers (they apply to the chart's objects);
// a name prefix or suffix and components are refused by name.
func UnitRelease(u UnitChart) (*build.Result, error) {
	b := u.Build
	var errs []error
	refuse := func(field string, set bool) {
		if set {
			errs = append(errs, fmt.Errorf("spec.%s: not supported for a unit whose path is a chart (its objects are the chart's): set it in the chart's templates", field))
		}
	}
	refuse("namePrefix", b.NamePrefix != "")
	refuse("nameSuffix", b.NameSuffix != "")
	refuse("components", len(b.Components) > 0)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	rel, ok := paths.Within(b.Root, b.Path)
	if !ok {
		return nil, fmt.Errorf("chart %s is not in the repository", b.Path)
	}
	rel = filepath.ToSlash(rel)
	ns := or(u.Namespace, "default")
	src := u.Source
	if src.Name == "" {
		src = ThisRepository
	}
	spec := map[string]any{
		"interval": "1h", // read, not acted on; Flux requires it
		"chart": map[string]any{"spec": map[string]any{
			"chart":                    "./" + rel,
			"sourceRef":                map[string]any{"kind": src.Kind, "name": src.Name, "namespace": src.Namespace},
			"valuesFiles":              []any{path.Join(rel, "values.yaml"), path.Join(rel, "values-"+u.Name+".yaml")},
			"ignoreMissingValuesFiles": true,
		}},
		"releaseName": u.Name,
	}
	if len(b.Labels)+len(b.Annotations) > 0 {
		spec["commonMetadata"] = map[string]any{"labels": stringMap(b.Labels), "annotations": stringMap(b.Annotations)}
	}
	if len(b.Images)+len(b.Patches) > 0 {
		var images, patches []any
		for _, i := range b.Images {
			images = append(images, map[string]any{"name": i.Name, "newName": i.NewName, "newTag": i.NewTag, "digest": i.Digest})
		}
		for _, p := range b.Patches {
			e := map[string]any{"patch": p.Patch}
			if t := p.Target; t != nil {
				e["target"] = map[string]any{"group": t.Group, "version": t.Version, "kind": t.Kind, "name": t.Name, "namespace": t.Namespace,
					"labelSelector": t.LabelSelector, "annotationSelector": t.AnnotationSelector}
			}
			patches = append(patches, e)
		}
		spec["postRenderers"] = []any{map[string]any{"kustomize": map[string]any{"images": images, "patches": patches}}}
	}
	hr := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	hr.SetAPIVersion(ReleaseGroup + "/v2")
	hr.SetKind("HelmRelease")
	hr.SetName(u.Name)
	hr.SetNamespace(ns)
	// The chart's files need not be inputs: the release's digest covers
	// them (Chart.Digest), and decides whether the unit can be reused.
	file := path.Join(rel, chartFile)
	return &build.Result{
		Objects: []*unstructured.Unstructured{hr},
		Sources: map[object.ID]string{object.IDOf(hr): file},
		Inputs:  build.Inputs{Files: []string{file}, Complete: true},
	}, nil
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
