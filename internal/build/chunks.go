package build

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// defaultChunkSize is how many manifest files one kustomize run builds
// when a plain directory is built in chunks (Options.chunkSize).
const defaultChunkSize = 200

// chunks splits a generated kustomization's files into runs of
// opts.chunkSize.
//
// Kustomize checks every resource it adds against all those it holds, so a
// build costs O(n²) in the number of objects (0.6 s for 1,000 ConfigMaps,
// tens of seconds for 5,000). For a plain directory that Build listed
// itself, with only manifest files, and no target namespace, name prefix
// or suffix, no transformation looks across objects: nothing is renamed or
// moved, so kustomize's name references (which also carry namespaces, e.g.
// a RoleBinding's ServiceAccount subjects follow the ServiceAccount into
// the target namespace) change nothing, and building in chunks gives the
// same objects in the same order at linear cost. Anything else is built in
// one run: the result is a single nil chunk, meaning "as written".
func chunks(g *generated, opts Options) [][]string {
	renames := opts.TargetNamespace != "" || opts.NamePrefix != "" || opts.NameSuffix != ""
	// A patch or component must see every object it may target.
	whole := len(opts.Patches) > 0 || len(opts.Components) > 0
	if g == nil || !g.filesOnly || renames || whole || len(g.resources) <= opts.chunkSize {
		return [][]string{nil}
	}
	var out [][]string
	for rest := g.resources; len(rest) > 0; {
		n := min(opts.chunkSize, len(rest))
		out = append(out, rest[:n])
		rest = rest[n:]
	}
	return out
}

// noDuplicates fails on two objects with the same identity, as kustomize
// does within one run; across chunks it is ours to check.
func noDuplicates(objs []*unstructured.Unstructured, sources []string, lineOf func(src string, id object.ID) int) error {
	seen := make(map[object.ID]int, len(objs))
	for i, u := range objs {
		id := object.IDOf(u)
		if j, ok := seen[id]; ok {
			err := fmt.Errorf("%s is defined twice: in %s and in %s", id, sources[j], sources[i])
			if sources[i] != "" && !isRemoteSource(sources[i]) {
				err = &FileError{File: sources[i], Line: lineOf(sources[i], id), Err: err}
			}
			return err
		}
		seen[id] = i
	}
	return nil
}
