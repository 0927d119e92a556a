package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
)

// A unit's Flux Operator ResourceSets are expanded when it is rendered,
// after its build is decrypted and substituted (as the operator reads
// the ResourceSet kustomize-controller applied) and before its
// HelmReleases are rendered: what a ResourceSet generates is the unit's
// own, so a HelmRelease among it renders into its chart's objects, a
// Kustomization among it becomes a unit of the configuration (found when
// discovery renders the unit), and everything else is applied, recorded
// in the unit's inventory and pruned once it is no longer generated (a
// pull request closed). The ResourceSets and ResourceSetInputProviders
// are read, never applied (their notes say so), in every unit, since no
// operator is there to read them; one an earlier run applied is orphaned,
// not deleted (splitResourceSets). A build that asked GitHub for inputs
// is never reused (inputsOf): the same files may generate other objects.

// expandResourceSets expands the ResourceSets among rendered's objects
// (root: the copy its sources are in), replacing them and their input
// providers by what they generate.
func expandResourceSets(ctx context.Context, rendered *Rendered, opts Options, root string) error {
	var found bool
	for _, u := range rendered.Objects {
		if resourceset.Is(u) {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	files := map[string][]byte{}
	origin := func(id object.ID) resourceset.Origin {
		file := rendered.Sources[id]
		if file == "" {
			return resourceset.Origin{}
		}
		if _, ok := files[file]; !ok {
			files[file], _ = os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		}
		return resourceset.Origin{File: file, Data: files[file]}
	}
	// As every namespaced object without a namespace, a ResourceSet or
	// provider without one is in the unit's namespace; the operator reads
	// it there (the providers it names, its inputs.provider.namespace).
	moved := map[object.ID]object.ID{}
	for _, u := range rendered.Objects {
		if resourceset.Is(u) && u.GetNamespace() == "" && opts.Namespace != "" {
			old := object.IDOf(u)
			u.SetNamespace(opts.Namespace)
			moved[old] = object.IDOf(u)
		}
	}
	object.Rekey(rendered.Sources, moved)
	object.Rekey(rendered.SecretFields, moved)
	for _, u := range rendered.Objects {
		id := object.IDOf(u)
		if resourceset.Is(u) && rendered.SecretFields[id] != nil {
			return &build.FileError{File: rendered.Sources[id], Err: fmt.Errorf("%s holds values decrypted or substituted from a secret: it is not read, since what the ResourceSets generate from it would show them", id)}
		}
	}
	x, err := resourceset.Expand(ctx, rendered.Objects, origin, opts.ResourceSets)
	if err != nil {
		return asFileErrors(err)
	}
	kept := rendered.Objects[:0]
	var removed []*unstructured.Unstructured
	for _, u := range rendered.Objects {
		if resourceset.Is(u) {
			removed = append(removed, u)
			continue
		}
		kept = append(kept, u)
	}
	clear(rendered.Objects[len(kept):])
	rendered.Objects = kept
	for _, u := range removed {
		id, gk := object.IDOf(u), u.GroupVersionKind().GroupKind()
		rendered.LeftOut = append(rendered.LeftOut, LeftOut{ID: id, Why: LeftOutKinds[gk]})
		delete(rendered.SecretFields, id)
		if gk == resourceset.SetKind {
			rendered.ResourceSets = append(rendered.ResourceSets, id)
		}
	}
	// A generated Secret's values, those copied from the cluster
	// (copyFrom) among them, are masked as the unit's own are.
	maskWith(opts.Mask, decrypt.SecretValues(x.Generated()))
	rendered.Generated = map[object.ID]object.ID{}
	for _, s := range x.Sets {
		for _, g := range s.Objects {
			rendered.Sources[object.IDOf(g)] = rendered.Sources[s.ID]
			rendered.Generated[object.IDOf(g)] = s.ID
		}
		rendered.Objects = append(rendered.Objects, s.Objects...)
		rendered.Notes = append(rendered.Notes, fmt.Sprintf("%s: %d input set(s), %d object(s) generated", s.ID, s.Inputs, len(s.Objects)))
	}
	for _, u := range removed {
		delete(rendered.Sources, object.IDOf(u))
	}
	rendered.Notes = append(rendered.Notes, x.Notes...)
	if x.External {
		rendered.Inputs.Complete = false
	}
	return nil
}

// asFileErrors wraps each *resourceset.Error joined in err as the
// build.FileError of its file and line, which front ends annotate.
func asFileErrors(err error) error {
	wrap := func(e error) error {
		var re *resourceset.Error
		if errors.As(e, &re) && re.File != "" {
			return &build.FileError{File: re.File, Line: re.Line, Err: e}
		}
		return e
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return wrap(err)
	}
	var errs []error
	for _, e := range j.Unwrap() {
		errs = append(errs, wrap(e))
	}
	return errors.Join(errs...)
}
