package pipeline

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
)

// Why a unit leaves out Flux Operator's ResourceSets and their providers.
const (
	whyResourceSet = "a Flux Operator ResourceSet: expanded here into the objects it generates, which the unit applies; not applied itself"
	whyProvider    = "a Flux Operator ResourceSetInputProvider: read by the unit's ResourceSets, not applied"
)

// expandResourceSets replaces, when opts.ResourceSets asks for it, the
// ResourceSets among rendered's objects by the objects each generates
// (see package resourceset), as Flux Operator would apply them: they are
// the unit's own (applied, pruned and waited for with it; Kustomizations
// among them become units of the configuration). The ResourceSets and
// the ResourceSetInputProviders they read are left out, with notes. An
// expansion that fails, or generates an object the build already has,
// fails the unit naming the ResourceSet and its file.
func expandResourceSets(ctx context.Context, rendered *Rendered, opts Options) error {
	if !opts.ResourceSets {
		return nil
	}
	var rsets, providers, kept []*unstructured.Unstructured
	for _, u := range rendered.Objects {
		switch {
		case resourceset.IsResourceSet(u):
			rsets = append(rsets, u)
		case resourceset.IsProvider(u):
			providers = append(providers, u)
		default:
			kept = append(kept, u)
		}
	}
	if len(rsets)+len(providers) == 0 {
		return nil
	}
	have := map[object.ID]string{}
	for _, u := range kept {
		have[object.IDOf(u)] = "the build"
	}
	var generated []*unstructured.Unstructured
	var notes []string
	for _, rs := range rsets {
		id := object.IDOf(rs)
		file := rendered.Sources[id]
		name := fmt.Sprintf("%s %s/%s", resourceset.Kind, rs.GetNamespace(), rs.GetName())
		if file != "" {
			name += " (" + file + ")"
		}
		exp, err := resourceset.Expand(ctx, rs, providers, rsets, opts.ResourceSetInputs)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, u := range exp.Objects {
			gid := object.IDOf(u)
			if by, dup := have[gid]; dup {
				return fmt.Errorf("%s generates %s, which %s already has", name, gid, by)
			}
			have[gid] = name
			rendered.Sources[gid] = file
			generated = append(generated, u)
		}
		notes = append(notes, exp.Notes...)
		if exp.External {
			// What the files build depends on a service too: the unit
			// is built again on every run, never reused by its inputs.
			rendered.Inputs.Complete = false
		}
		rendered.LeftOut = append(rendered.LeftOut, LeftOut{ID: id, Why: fmt.Sprintf("%s (%d object(s))", whyResourceSet, len(exp.Objects))})
		delete(rendered.Sources, id)
	}
	for _, p := range providers {
		id := object.IDOf(p)
		rendered.LeftOut = append(rendered.LeftOut, LeftOut{ID: id, Why: whyProvider})
		delete(rendered.Sources, id)
	}
	rendered.Objects = append(kept, generated...)
	if opts.Progress != nil && len(notes) > 0 {
		fmt.Fprintln(opts.Progress, "note: "+strings.Join(notes, "\nnote: "))
	}
	return nil
}
