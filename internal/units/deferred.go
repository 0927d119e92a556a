package units

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
)

// Units' sources are resolved as the configuration opens (see Open), so
// that a diff, a pull request's review, the changed-only rendering and
// the plan know every unit's tree before any unit runs. On a first
// deploy, a source may read its credentials from an object that the
// configuration itself creates in an earlier unit (d2-fleet's tenants:
// a ResourceSet makes each tenant's namespace, its ServiceAccount flux
// with a pull Secret, and the OCIRepository that pulls as that account):
// it cannot be resolved yet. Flux's source-controller retries such a
// source until the object exists; a run resolves it at the unit's own
// turn, once the unit that creates the object has been applied (see
// source.Resolver.Again: still once per run).
//
// Only an object the configuration is known to create earlier defers a
// source: one of the units this one runs after (its dependsOn, the
// Kustomization that emitted it, those it waits for, and theirs in
// turn) has it in its build. That explains itself (the unit is named),
// and a Secret nobody creates still fails the unit as the configuration
// opens, naming it, instead of failing only at the unit's turn, after
// everything before it was applied, as deferring on any missing object
// would. Which objects a build creates is read from discovery's
// renderings; a unit discovery did not render (it emits no Flux object)
// is rendered to find out only when a source's missing object may be
// its (the rendering is kept for its own run, see pipeline.Builds).
//
// A run that writes nothing (a diff, a drift report) does not apply the
// creating unit: the deferred unit is skipped, saying where its source's
// credentials come from (result.ReasonSourceDeferred). If the creating
// unit fails, the deferred unit is skipped as every dependent is
// (DependencyNotReady): the creator is among the units it runs after.

// DeferredError is a unit whose source reads its credentials from an
// object that does not exist yet and that an earlier unit of the run
// creates (see deferSources): resolved at the unit's turn.
type DeferredError struct {
	Unit   *config.Unit
	Source config.SourceRef
	// Missing is the object the credentials are read from; By the unit
	// whose build creates it, which runs before Unit.
	Missing *fetch.MissingError
	By      string
}

func (e *DeferredError) Error() string {
	return fmt.Sprintf("Kustomization %s (%s): spec.sourceRef %s reads its credentials from %s, which unit %s creates and which does not exist yet: the source is resolved at this unit's turn, once %s has been applied",
		e.Unit.Ref, where(e.Unit), e.Source, e.Missing.Object(), e.By, e.By)
}

// notApplied says why a run that writes nothing does not build the unit.
func (e *DeferredError) notApplied() string {
	return fmt.Sprintf("not built: spec.sourceRef %s reads its credentials from %s, which unit %s creates and this run does not apply: the source is resolved once %s has been applied",
		e.Source, e.Missing.Object(), e.By, e.By)
}

// createdKey names an object a build creates: KIND NAMESPACE/NAME.
func createdKey(kind, namespace, name string) string {
	return kind + " " + namespace + "/" + name
}

// creations are the Secrets and ServiceAccounts units' builds create
// (createdKey), by unit; safe for concurrent use.
type creations struct {
	mu sync.Mutex
	// by lists the units creating each object; scanned are the units
	// whose builds were read.
	by      map[string][]string
	scanned map[string]bool
}

// add records that unit's build creates keys (and that it was read).
func (cs *creations) add(unit string, keys []string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.by == nil {
		cs.by, cs.scanned = map[string][]string{}, map[string]bool{}
	}
	cs.scanned[unit] = true
	for _, k := range keys {
		if !slices.Contains(cs.by[k], unit) {
			cs.by[k] = append(cs.by[k], unit)
		}
	}
}

// snapshot is what cs knows: the creators by object, and the units read.
func (cs *creations) snapshot() (map[string][]string, map[string]bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	by := make(map[string][]string, len(cs.by))
	for k, v := range cs.by {
		by[k] = slices.Clone(v)
	}
	scanned := make(map[string]bool, len(cs.scanned))
	for k, v := range cs.scanned {
		scanned[k] = v
	}
	return by, scanned
}

// deferTo decides whether unit name, which failed with err, waits for
// its turn to resolve its source: when err is an object a source's
// credentials are read from that is missing (a *fetch.MissingError) and
// one of the units name runs after (dependsOn, by unit name: the run's
// dependency graph, followed transitively) creates it (creates, by
// createdKey). It returns the missing object and the creating unit
// nearest to name; a nil object for none.
func deferTo(err error, name string, dependsOn map[string][]string, creates map[string][]string) (*fetch.MissingError, string) {
	var missing *fetch.MissingError
	if !errors.As(err, &missing) {
		return nil, ""
	}
	creators := creates[createdKey(missing.Kind, missing.Namespace, missing.Name)]
	for _, a := range ancestors(name, dependsOn) {
		if slices.Contains(creators, a) {
			return missing, a
		}
	}
	return nil, ""
}

// ancestors are the units name runs after (dependsOn, followed
// transitively), nearest first.
func ancestors(name string, dependsOn map[string][]string) []string {
	seen := map[string]bool{name: true}
	var out []string
	queue := []string{name}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, d := range dependsOn[n] {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
				queue = append(queue, d)
			}
		}
	}
	return out
}

// deferSources defers the sources of the units of out that failed to
// resolve for a missing object an earlier unit creates (see deferTo):
// their Err becomes a *DeferredError, and resolve resolves the source at
// the unit's turn. The units they run after that discovery did not
// render are rendered to find out what they create, only when a source
// misses an object that no unit is known to create.
func (c Config) deferSources(ctx context.Context, out []Unit) {
	dependsOn := map[string][]string{}
	index := map[string]int{}
	for i, u := range out {
		dependsOn[u.Options.Name] = u.DependsOn
		index[u.Options.Name] = i
	}
	byName := map[string]*config.Unit{}
	for _, u := range c.Set.Units {
		byName[u.Name] = u
	}
	creates := c.creates
	if creates == nil {
		creates = &creations{}
	}
	for i := range out {
		var missing *fetch.MissingError
		if out[i].Err == nil || !errors.As(out[i].Err, &missing) {
			continue
		}
		name := out[i].Options.Name
		by, scanned := creates.snapshot()
		obj, creator := deferTo(out[i].Err, name, dependsOn, by)
		if obj == nil {
			// Not known to be created earlier: read the builds of the
			// units it runs after that were not read yet.
			for _, a := range ancestors(name, dependsOn) {
				j, ok := index[a]
				if !ok || scanned[a] || out[j].Err != nil {
					continue
				}
				f := c.emittedBy(ctx, out[j])
				if f.err == nil {
					creates.add(a, f.creates)
				}
			}
			by, _ = creates.snapshot()
			obj, creator = deferTo(out[i].Err, name, dependsOn, by)
		}
		u := byName[name]
		if obj == nil || u == nil {
			continue
		}
		d := &DeferredError{Unit: u, Source: u.Source, Missing: obj, By: creator}
		out[i].Err = d
		out[i].resolve = c.resolveAtTurn(d)
	}
}

// resolveAtTurn resolves the source of the unit d defers at its turn
// (source.Resolver.Again), and returns its options completed with it (see
// withSource), or why the unit fails: its source still not resolving (a
// *SourceError), or its spec.path not in the tree (a *RefusedError).
func (c Config) resolveAtTurn(d *DeferredError) func(context.Context, pipeline.Options) (pipeline.Options, error) {
	u := d.Unit
	return func(ctx context.Context, o pipeline.Options) (pipeline.Options, error) {
		sources := c.resolver()
		src, err := sources.Again(ctx, u)
		if err != nil {
			err = sourceError(u, err)
			var se *SourceError
			if errors.As(err, &se) {
				se.Why += fmt.Sprintf(" (resolved at this unit's turn, after unit %s, which creates %s)", d.By, d.Missing.Object())
			}
			return o, err
		}
		if err := withSource(&o, u, src, sources); err != nil {
			return o, &RefusedError{Unit: u.Name, Where: where(u), Err: err}
		}
		o.Notes = append(o.Notes, fmt.Sprintf("spec.sourceRef %s was resolved at this unit's turn: it reads its credentials from %s, which unit %s, applied before it, creates", u.Source, d.Missing.Object(), d.By))
		return o, nil
	}
}
