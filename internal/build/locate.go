package build

import (
	"path/filepath"

	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// visited is a local kustomization the preflight read: its file, text and
// what it declares.
type visited struct {
	dir, file string
	k         *kustypes.Kustomization
}

// locate finds the file behind a failed kustomize build, which kustomize
// names only in its message, if at all. Each kustomization of the unit is
// built on its own, innermost first (kustomize builds bases on their own
// too, so the first to fail is the one at fault): the culprit is that
// kustomization, or, when two of the files it lists declare one object,
// the second declaration (at its line). gen is the kustomization Build
// generated, if any, whose files are looked at the same way, and which is
// never named itself. nil when every kustomization builds on its own (the
// transformations on top, the Flux Kustomization's, failed), or only the
// generated one fails.
func (p *preflight) locate(gen *generated) *FileError {
	for _, v := range p.order {
		if v.k.Kind == kustypes.ComponentKind {
			continue // not buildable alone
		}
		if _, err := runKustomize(p.fsys, v.dir, false); err == nil {
			continue
		}
		if fe := p.duplicate(v.dir, v.k.Resources); fe != nil {
			return fe
		}
		if v.dir == p.generated {
			return nil // a kustomization the user never wrote
		}
		return &FileError{File: relTo(p.root, v.file)}
	}
	if gen != nil {
		return p.duplicate(gen.dir, gen.resources)
	}
	return nil
}

// duplicate finds, among the files of resources (entries of dir's
// kustomization; directories are skipped), the second declaration of an
// object kustomize takes for one already declared (see
// kustomizeDuplicates), nil if there is none.
func (p *preflight) duplicate(dir string, resources []string) *FileError {
	kustomizeMu.Lock() // kustomize's package state, see runKustomize
	defer kustomizeMu.Unlock()
	rf := provider.NewDefaultDepProvider().GetResourceFactory()
	seen := map[[4]string]bool{}
	for _, entry := range resources {
		path := filepath.Join(dir, filepath.FromSlash(entry))
		if remoteBase.MatchString(entry) || p.fsys.IsDir(path) {
			continue
		}
		data, err := p.fsys.ReadFile(path)
		if err != nil {
			continue
		}
		var rs []*resource.Resource
		if !readResources(rf, data, &rs) {
			continue
		}
		for _, r := range rs {
			ns := r.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			gvk := r.GetGvk()
			k := [4]string{gvk.Group, gvk.Kind, ns, r.GetName()}
			if seen[k] {
				id := object.ID{Group: gvk.Group, Kind: gvk.Kind, Namespace: r.GetNamespace(), Name: r.GetName()}
				return &FileError{File: relTo(p.root, path), Line: object.Line(data, id)}
			}
			seen[k] = true
		}
	}
	return nil
}
