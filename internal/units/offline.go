package units

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// DiffOffline diffs every unit's rendered manifests against the same unit
// at Spec.Base, without a cluster (see pipeline.DiffOffline), in
// configuration order: a unit new since Base is all created. Without a
// Base, every unit is diffed against nothing. Every unit is rendered
// first, so that the schema check of each knows the CRDs of all (see
// renderSealed); a custom resource whose kind has no schema anywhere is
// noted on its entry, not failed. For the whole configuration, the units
// in it at Base and not now follow, with what an apply does to them if
// they were deployed from it (see offlineGone): no inventory can be read
// without a cluster.
func (r *Run) DiffOffline(ctx context.Context) *result.Set {
	start := time.Now()
	set := &result.Set{Mode: result.ModeDiff, Revision: r.cfg.Base.Revision, Ready: true, StartedAt: start.UTC()}
	heads, unitOpts, schemas := r.renderSealed(ctx)
	for i, u := range r.units {
		opts := unitOpts[i]
		opts.Progress = prefixed(orDiscard(r.opts.Progress), opts.Name)
		opts.Schemas = schemas
		base := At(opts.Base, opts.At, opts.Dir) // none for a unit of another source
		var res *result.Result
		switch {
		case u.Err != nil:
			res = unbuildable(u, result.ModeDiff)
		case heads[i] != nil:
			res, _ = pipeline.DiffOfflineRendered(ctx, opts, heads[i], base)
		default:
			res, _ = pipeline.DiffOffline(ctx, opts, base) // renders again, to fail saying why
		}
		set.Units = append(set.Units, res)
		set.Ready = set.Ready && !res.Failed()
	}
	if len(r.cfg.Only) == 0 {
		gone, err := r.cfg.offlineGone(ctx, r.path)
		for _, res := range gone {
			set.Units = append(set.Units, res)
			set.Ready = set.Ready && !res.Failed()
		}
		if err != nil && r.opts.Progress != nil {
			fmt.Fprintf(r.opts.Progress, "warning: looking for units that left the configuration since the base revision: %v\n", err)
		}
	}
	set.Duration = time.Since(start).Round(time.Millisecond).String()
	r.cfg.counted(set)
	return set
}

// renderSealed renders the run's units without keys (pipeline.RenderSealed)
// for their offline diff: nil for a unit that does not render. It returns
// them, the options each was rendered with (charts see the configuration's
// capabilities, see below), and what their schema check knows: the run's
// schemas (a schema directory) and the CustomResourceDefinitions of every
// unit of the configuration, those outside the run (Only) included, the
// charts' CRDs among them. A cluster would hold them all before the units
// that use them run (dependsOn); offline, no unit's custom resources fail
// for want of a CRD another unit brings. For the same reason, templates
// see the API versions of those CRDs in .Capabilities (and the
// --kube-version setting): the units with charts are rendered again once
// every unit's CRDs are known.
func (r *Run) renderSealed(ctx context.Context) ([]*pipeline.Rendered, []pipeline.Options, *validate.Known) {
	heads := make([]*pipeline.Rendered, len(r.units))
	opts := make([]pipeline.Options, len(r.units))
	var crds []*unstructured.Unstructured
	for i, u := range r.units {
		opts[i] = pipeline.WithOfflineCapabilities(u.Options, nil)
		if u.Err != nil {
			continue // it builds nothing
		}
		o := opts[i]
		o.Progress = prefixed(orDiscard(r.opts.Progress), o.Name)
		if rendered, err := pipeline.RenderSealed(ctx, o); err == nil {
			heads[i] = rendered
			crds = append(crds, onlyCRDs(rendered.Objects)...)
		}
	}
	for _, u := range r.outside(ctx) {
		u.Options = pipeline.WithOfflineCapabilities(u.Options, nil)
		u.Options.Progress = io.Discard
		if rendered, err := pipeline.RenderSealed(ctx, u.Options); err == nil {
			crds = append(crds, onlyCRDs(rendered.Objects)...)
		}
	}
	if len(crds) > 0 {
		for i, u := range r.units {
			if u.Err != nil || u.Options.Charts == nil || (heads[i] != nil && len(heads[i].Charts) == 0) {
				continue // no chart to see the capabilities
			}
			opts[i] = pipeline.WithOfflineCapabilities(u.Options, crds)
			o := opts[i]
			o.Progress = io.Discard // said the first time
			heads[i], _ = pipeline.RenderSealed(ctx, o)
		}
	}
	return heads, opts, r.cfg.Base.Schemas.WithCRDs(crds)
}

// outside are the units of the configuration the run leaves out (Only),
// those that map onto the engine.
func (r *Run) outside(ctx context.Context) []Unit {
	if len(r.cfg.Only) == 0 {
		return nil
	}
	byRef := map[config.Ref]*config.Unit{}
	for _, u := range r.cfg.Set.Units {
		byRef[u.Ref] = u
	}
	var out []Unit
	for _, u := range r.cfg.Set.Units {
		if slices.Contains(r.cfg.Only, u.Name) {
			continue
		}
		if unit, err := r.cfg.unit(ctx, u, byRef); err == nil && unit.Err == nil {
			out = append(out, unit)
		}
	}
	return out
}

func onlyCRDs(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range objs {
		if utils.IsCRD(u) {
			out = append(out, u)
		}
	}
	return out
}

// At checks out the unit's directory head at revision rev with at, for an
// offline diff: no revision, or a directory missing there, is no directory
// (nothing to compare with: everything is new). The worktrees at makes are
// the caller's to remove.
func At(rev string, at func(ctx context.Context, rev string, head paths.Dir) (*paths.Dir, error), head paths.Dir) pipeline.Checkout {
	return func(ctx context.Context) (*paths.Dir, func(), error) {
		noop := func() {}
		if rev == "" || at == nil {
			return nil, noop, nil
		}
		dir, err := at(ctx, rev, head)
		return dir, noop, err
	}
}
