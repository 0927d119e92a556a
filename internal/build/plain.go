package build

import (
	"path/filepath"
	"runtime"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resource"
)

// transforms reports whether opts change objects beyond what their files
// say: every transformation kustomize runs for a Flux Kustomization.
func (opts Options) transforms() bool {
	return opts.TargetNamespace != "" || opts.NamePrefix != "" || opts.NameSuffix != "" ||
		len(opts.Images) > 0 || len(opts.Labels) > 0 || len(opts.Annotations) > 0 ||
		len(opts.Patches) > 0 || len(opts.Components) > 0
}

// plainObjects renders a plain directory (a kustomization Build generated,
// listing manifest files only) without kustomize's accumulation, when
// nothing transforms its objects: kustomize would then return each file's
// objects as its resource factory reads them (documents dropped when
// empty, Lists expanded, YAML anchors resolved), in the listed order. The
// same factory reads them here, without the cost of kustomize checking
// every object against all the others it holds, which is most of a build
// of a thousand files. Local configuration (config.kubernetes.io/
// local-config) is dropped, as kustomize drops it. ok is false when the directory needs kustomize
// itself, or when a file does not read cleanly: kustomize then reports it
// in its own words.
func plainObjects(fsys *confinedFS, g *generated, root string) (objs []*unstructured.Unstructured, sources []string, ok bool) {
	kustomizeMu.Lock() // kustomize's package state, see runKustomize
	defer kustomizeMu.Unlock()
	// Kustomize looks for each kustomization file name: one appearing
	// changes the build, so each is an input, as it records them.
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		_, _ = fsys.ReadFile(filepath.Join(g.dir, name))
	}
	// Files are read and turned into objects on every CPU, each file's
	// objects kept in its place.
	rf := provider.NewDefaultDepProvider().GetResourceFactory()
	perFile := make([][]*unstructured.Unstructured, len(g.resources))
	var failed atomic.Bool
	var g2 errgroup.Group
	g2.SetLimit(runtime.GOMAXPROCS(0))
	for i, rel := range g.resources {
		g2.Go(func() error {
			if failed.Load() {
				return nil
			}
			us, ok := fileObjects(fsys, rf, filepath.Join(g.dir, filepath.FromSlash(rel)))
			if !ok {
				failed.Store(true)
			}
			perFile[i] = us
			return nil
		})
	}
	_ = g2.Wait()
	if failed.Load() {
		return nil, nil, false
	}
	for i, us := range perFile {
		src := relTo(root, filepath.Join(g.dir, filepath.FromSlash(g.resources[i])))
		for _, u := range us {
			objs, sources = append(objs, u), append(sources, src)
		}
	}
	if kustomizeDuplicates(objs) {
		return nil, nil, false
	}
	// Kustomize drops local configuration once it has every object.
	n := 0
	for i, u := range objs {
		if v, local := u.GetAnnotations()[konfig.IgnoredByKustomizeAnnotation]; local && v != "false" {
			continue
		}
		objs[n], sources[n] = u, sources[i]
		n++
	}
	return objs[:n], sources[:n], true
}

// fileObjects reads the file at path and returns its objects; ok is false
// when it does not read cleanly.
func fileObjects(fsys *confinedFS, rf *resource.Factory, path string) (objs []*unstructured.Unstructured, ok bool) {
	data, err := fsys.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var rs []*resource.Resource
	if !readResources(rf, data, &rs) {
		return nil, false
	}
	for _, r := range rs {
		u, err := resourceObject(r)
		if err != nil {
			return nil, false
		}
		objs = append(objs, u)
	}
	return objs, true
}

// kustomizeDuplicates reports two objects kustomize takes for one, and
// refuses: same kind and name, in the same namespace, none counting as
// "default".
func kustomizeDuplicates(objs []*unstructured.Unstructured) bool {
	seen := make(map[[4]string]bool, len(objs))
	for _, u := range objs {
		ns := u.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		gvk := u.GroupVersionKind()
		k := [4]string{gvk.Group, gvk.Kind, ns, u.GetName()}
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// readResources reads data's resources into rs, as kustomize's resource
// factory does; false on any error (or panic: kustomize has some on
// malformed input).
func readResources(rf *resource.Factory, data []byte, rs *[]*resource.Resource) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	out, err := rf.SliceFromBytes(data)
	*rs = out
	return err == nil
}
