package build

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/konfig"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// writeWrapper writes a kustomization that builds target with the
// command-line transformations on top, like the one Flux generates from a
// Kustomization's spec, and returns its directory and a cleanup func.
//
// It lives in a fresh temporary directory rather than under the root:
// kustomize refuses a base that contains the kustomization referring to it,
// so a wrapper under the root could not build the root itself. The
// directory is allowed in fsys and holds nothing but the wrapper.
//
// The wrapper is also the root kustomization, so it carries the
// buildMetadata that records each object's origin, plus the user's own
// root-only settings (sortOptions, managedByLabel), which kustomize reads
// from the root alone.
func writeWrapper(fsys *confinedFS, target string, opts Options, user *kustypes.Kustomization) (string, func(), error) {
	tmp, err := os.MkdirTemp("", "kd-build-")
	if err != nil {
		return "", nil, fmt.Errorf("creating the wrapper kustomization: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	dir, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("creating the wrapper kustomization: %w", err)
	}
	rel, err := filepath.Rel(dir, target)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	k := kustypes.Kustomization{
		TypeMeta:      kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
		Resources:     []string{filepath.ToSlash(rel)},
		Namespace:     opts.TargetNamespace,
		NamePrefix:    opts.NamePrefix,
		NameSuffix:    opts.NameSuffix,
		Images:        kustomizeImages(opts.Images),
		Patches:       kustomizePatches(opts.Patches),
		BuildMetadata: []string{kustypes.OriginAnnotations},
	}
	if k.Components, err = components(fsys, dir, target, opts); err != nil {
		cleanup()
		return "", nil, err
	}
	if len(opts.Labels) > 0 {
		// Metadata only: selectors are immutable on Deployments and
		// templates changing would restart every pod.
		k.Labels = []kustypes.Label{{Pairs: opts.Labels}}
	}
	if len(opts.Annotations) > 0 {
		t, err := annotationsTransformer(opts.Annotations)
		if err != nil {
			cleanup()
			return "", nil, err
		}
		k.Transformers = []string{t}
	}
	if user != nil {
		k.SortOptions = user.SortOptions
		for _, m := range user.BuildMetadata {
			if m == kustypes.ManagedByLabelOption {
				k.BuildMetadata = append(k.BuildMetadata, m)
			}
		}
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	fsys.allow(dir)
	if err := fsys.WriteFile(filepath.Join(dir, konfig.DefaultKustomizationFileName()), data); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("writing the wrapper kustomization: %w", err)
	}
	return dir, cleanup, nil
}

// annotationsTransformer returns an inline builtin AnnotationsTransformer
// that sets annotations on each object's own metadata. commonAnnotations
// would also write them into pod templates, restarting pods whenever a
// value changes; Flux's commonMetadata touches metadata only, and so do we.
func annotationsTransformer(annotations map[string]string) (string, error) {
	data, err := yaml.Marshal(map[string]interface{}{
		"apiVersion":  "builtin",
		"kind":        "AnnotationsTransformer",
		"metadata":    map[string]interface{}{"name": "kustomize-deploy-annotations"},
		"annotations": annotations,
		"fieldSpecs":  []interface{}{map[string]interface{}{"path": "metadata/annotations", "create": true}},
	})
	return string(data), err
}
