package build

import (
	"fmt"
	"path/filepath"

	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// Patch is a strategic merge or JSON 6902 patch, inline, applied to the
// objects Target selects (all objects the patch names when nil), as in a
// Flux Kustomization's spec.patches.
type Patch struct {
	Patch  string
	Target *Target
}

// Target selects objects by group, version, kind, name and namespace
// (regular expressions, as kustomize matches them) and label or
// annotation selectors.
type Target struct {
	Group, Version, Kind, Name, Namespace string
	LabelSelector, AnnotationSelector     string
}

// kustomizePatches turns patches into a kustomization's patches field.
func kustomizePatches(patches []Patch) []kustypes.Patch {
	var out []kustypes.Patch
	for _, p := range patches {
		k := kustypes.Patch{Patch: p.Patch}
		if t := p.Target; t != nil {
			k.Target = &kustypes.Selector{
				ResId:              resid.ResId{Gvk: resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind}, Name: t.Name, Namespace: t.Namespace},
				LabelSelector:      t.LabelSelector,
				AnnotationSelector: t.AnnotationSelector,
			}
		}
		out = append(out, k)
	}
	return out
}

// components returns opts.Components, relative to path as written, as
// paths relative to dir (the wrapper's directory); with
// IgnoreMissingComponents, those that do not exist are left out, as Flux
// does.
func components(fsys *confinedFS, dir, path string, opts Options) ([]string, error) {
	var out []string
	for _, c := range opts.Components {
		abs := filepath.Join(path, filepath.FromSlash(c))
		if err := fsys.check(abs); err != nil {
			return nil, fmt.Errorf("component %q: %w", c, err)
		}
		if opts.IgnoreMissingComponents && !fsys.Exists(abs) {
			continue
		}
		rel, err := filepath.Rel(dir, abs)
		if err != nil {
			return nil, err
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// replaceImages removes, from the kustomization file kfile, the images
// entries that opts overrides (same name), as Flux does: an override
// replaces the entry rather than applying on top of it, so a kustomization
// renaming web to registry/web:1.0 and an override web=:2.0 give web:2.0.
// The file is rewritten in place, which is safe in a scratch copy only.
func replaceImages(fsys *confinedFS, kfile string, overrides []Image) error {
	if kfile == "" || len(overrides) == 0 {
		return nil
	}
	names := map[string]bool{}
	for _, img := range overrides {
		names[img.Name] = true
	}
	data, err := fsys.ReadFile(kfile)
	if err != nil {
		return err
	}
	node, err := kyaml.Parse(string(data))
	if err != nil {
		return err // the preflight parsed it already; not expected
	}
	images, err := node.Pipe(kyaml.Lookup("images"))
	if err != nil || images == nil {
		return err
	}
	var kept []*kyaml.RNode
	elements, err := images.Elements()
	if err != nil {
		return err
	}
	for _, e := range elements {
		if name, _ := e.GetString("name"); !names[name] {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(elements) {
		return nil
	}
	images.YNode().Content = nil
	for _, e := range kept {
		images.YNode().Content = append(images.YNode().Content, e.YNode())
	}
	out, err := node.String()
	if err != nil {
		return err
	}
	return fsys.WriteFile(kfile, []byte(out))
}
