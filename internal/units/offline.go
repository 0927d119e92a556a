package units

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/danger"
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
	results := make([]*result.Result, len(r.units))
	r.each(len(r.units), func(i int) {
		u, opts := r.units[i], unitOpts[i]
		opts.Progress = prefixed(orDiscard(r.opts.Progress), opts.Name)
		opts.Schemas = schemas
		base := At(opts.Base, opts.At, opts.Dir) // none for a unit of another source
		switch {
		case u.Err != nil:
			results[i] = unbuildable(u, result.ModeDiff)
		case heads[i] != nil:
			results[i], _ = pipeline.DiffOfflineRendered(ctx, opts, heads[i], base)
		default:
			results[i], _ = pipeline.DiffOffline(ctx, opts, base) // renders again, to fail saying why
		}
	})
	for _, res := range results {
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
	// A Namespace one unit creates while another deletes one is a move.
	danger.MarkReplacedNamespaces(set.Units...)
	set.Duration = time.Since(start).Round(time.Millisecond).String()
	r.cfg.counted(set)
	if r.reach != nil {
		set.Reach = r.reach.report
	}
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
	for i, u := range r.units {
		opts[i] = pipeline.WithOfflineCapabilities(u.Options, nil)
	}
	r.each(len(r.units), func(i int) {
		if r.units[i].Err != nil {
			return // it builds nothing
		}
		o := opts[i]
		o.Progress = prefixed(orDiscard(r.opts.Progress), o.Name)
		heads[i], _ = pipeline.RenderSealed(ctx, o)
	})
	outside := r.outside(ctx, r.needsCRDs(heads))
	others := make([]*pipeline.Rendered, len(outside))
	r.each(len(outside), func(i int) {
		o := pipeline.WithOfflineCapabilities(outside[i].Options, nil)
		o.Progress = io.Discard
		others[i], _ = pipeline.RenderSealed(ctx, o)
	})
	// In configuration order, whatever order the renderings ended in.
	var crds []*unstructured.Unstructured
	for _, rendered := range slices.Concat(heads, others) {
		if rendered != nil {
			crds = append(crds, onlyCRDs(rendered.Objects)...)
		}
	}
	if len(crds) > 0 {
		r.each(len(r.units), func(i int) {
			u := r.units[i]
			if u.Err != nil || u.Options.Charts == nil || (heads[i] != nil && len(heads[i].Charts) == 0) {
				return // no chart to see the capabilities
			}
			opts[i] = pipeline.WithOfflineCapabilities(u.Options, crds)
			o := opts[i]
			o.Progress = io.Discard // said the first time
			heads[i], _ = pipeline.RenderSealed(ctx, o)
		})
	}
	return heads, opts, r.cfg.Base.Schemas.WithCRDs(crds)
}

// each calls do for every index below n, as many at a time as there are
// CPUs to render with (GOMAXPROCS), no more than the run's Parallel, and
// returns when every call has: units do not depend on each other to
// render offline, and a rendering is CPU-bound (more at once only makes
// more copies of the repository, see workspace.Snapshot.Reuse).
func (r *Run) each(n int, do func(i int)) {
	sem := make(chan struct{}, max(min(r.opts.Parallel, runtime.GOMAXPROCS(0)), 1))
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			do(i)
		}()
	}
	wg.Wait()
}

// outside are the units of the configuration the run leaves out (Only,
// or not reached by the change since the base), those that map onto the
// engine and whose CustomResourceDefinitions the run's units may need:
// none when needed is false; else those that may render one (see
// mayHoldCRDs).
func (r *Run) outside(ctx context.Context, needed bool) []Unit {
	if (len(r.cfg.Only) == 0 && r.reach == nil) || !needed {
		return nil
	}
	byRef := map[config.Ref]*config.Unit{}
	for _, u := range r.cfg.Set.Units {
		byRef[u.Ref] = u
	}
	var out []Unit
	for _, u := range r.cfg.Set.Units {
		if slices.ContainsFunc(r.units, func(run Unit) bool { return run.Options.Name == u.Name }) {
			continue
		}
		if unit, err := r.cfg.unit(ctx, u, byRef); err == nil && unit.Err == nil && r.mayHoldCRDs(unit, u) {
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
