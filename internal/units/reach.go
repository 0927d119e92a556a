package units

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/reach"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// A diff against a base revision (a pull request) renders only the units
// the change since the base can reach (see reach.Affected): rendering the
// others would give what they give at the base, a diff of nothing. What a
// unit reads is known without building it (reach.Static); whatever is in
// doubt is rendered. The units not reached are named on the result, not
// run; those that may hold CustomResourceDefinitions are still rendered
// when a unit that is needs them (see renderSealed).

// reached are the units a change reaches, and what tells it.
type reached struct {
	report *result.Reach
	// reads are the units' read sets, by name.
	reads map[string]reach.ReadSet
}

// reach works out which of list the change since c.Base.Base reaches.
// It returns nil, with why, when that cannot be told: every unit is then
// rendered.
func (c Config) reach(ctx context.Context, path string, list []Unit) (*reached, error) {
	changed, err := checkout.Changed(ctx, c.Root, c.Base.Base)
	if err != nil {
		return nil, err
	}
	base, _, err := c.atBase(ctx, path)
	if err != nil {
		return nil, err
	}
	byName := map[string]*config.Unit{}
	for _, u := range c.Set.Units {
		byName[u.Name] = u
	}
	atBase := map[config.Ref]*config.Unit{}
	if base != nil {
		for _, u := range base.Units {
			atBase[u.Ref] = u
		}
	}
	// A change that may change Flux's multi-tenancy lockdown changes as
	// whom, and with which references, every unit runs.
	lockdown := ""
	if l := c.Set.Lockdown; !l.IsZero() || base != nil && !base.Lockdown.IsZero() {
		for _, f := range changed {
			if l.MayChange(f) || base != nil && base.Lockdown.MayChange(f) {
				lockdown = fmt.Sprintf("Flux's multi-tenancy lockdown may have changed (%s)", f)
				break
			}
		}
	}
	units := make([]reach.Unit, len(list))
	reads := map[string]reach.ReadSet{}
	var emitted []int // units another emitted, whose definition at the base is not read yet
	for i, unit := range list {
		u := byName[unit.Options.Name]
		ru := reach.Unit{Name: unit.Options.Name}
		o := unit.Options
		switch {
		case u == nil || unit.Err != nil:
			ru.Reads.Unknown = "it cannot be built: rendering it says why"
		case o.Snapshot != nil:
			ru.Reads = reach.Static(o.Dir.Root, o.Dir.Rel, u.Components)
		case o.Base != "":
			ru.Reads.Unknown = "it builds an artifact an ArtifactGenerator makes of this checkout"
		default:
			ru.Charts = true // another source's HelmReleases may name charts and sources of this one
		}
		reads[ru.Name] = ru.Reads
		ru.Charts = ru.Charts || ru.Reads.Helm
		ru.CRDs = ru.Reads.CRDs || ru.Charts
		if u != nil {
			ru.Files = c.definedIn(u)
			for _, d := range dependencies(u) {
				if x := c.Set.Unit(d); x != nil {
					ru.DependsOn = append(ru.DependsOn, x.Name)
				}
			}
			if len(u.EmittedBy) == 0 {
				switch then := atBase[u.Ref]; {
				case base == nil:
					ru.Defined, ru.DefinedWhy = true, "the configuration is new since the base"
				case then == nil:
					ru.Defined, ru.DefinedWhy = true, "its Kustomization is new since the base"
				case !config.SameSpec(then, u):
					ru.Defined, ru.DefinedWhy = true, "its Kustomization changed ("+where(u)+")"
				}
			} else {
				emitted = append(emitted, i)
			}
		}
		if lockdown != "" {
			ru.Defined, ru.DefinedWhy = true, lockdown
		}
		units[i] = ru
	}
	change := reach.Change{Files: changed, Definitions: c.definitions(),
		Source:   func(f string) bool { return c.definesSource(ctx, f) },
		Values:   func(f string) bool { return c.definesValues(f) },
		ChartDir: func(f string) bool { return chartDir(c.Root, f) }}
	why := reach.Affected(units, change)
	// A unit another emits is defined by what its parent renders: when
	// the change reaches the parent, the parent is rendered at the base
	// too, and each unit it emits compared; level by level.
	byParent := map[string]map[config.Ref]*config.Unit{}
	for progressed := true; progressed; {
		progressed = false
		for _, i := range slices.Clone(emitted) {
			u := byName[list[i].Options.Name]
			parent := c.Set.Unit(u.EmittedBy[len(u.EmittedBy)-1])
			if parent == nil || why[parent.Name] == "" {
				continue
			}
			emitted = slices.DeleteFunc(emitted, func(j int) bool { return j == i })
			progressed = true
			then, ok := byParent[parent.Name]
			if !ok {
				var err error
				if then, err = c.emittedAtBase(ctx, parent, list); err != nil {
					units[i].Defined, units[i].DefinedWhy = true, fmt.Sprintf("its parent %s, which emits it, could not be rendered at the base: %v", parent.Name, err)
					continue
				}
				byParent[parent.Name] = then
			}
			switch was := then[u.Ref]; {
			case was == nil:
				units[i].Defined, units[i].DefinedWhy = true, fmt.Sprintf("%s emits it since the base", parent.Name)
			case !config.SameSpec(was, u):
				units[i].Defined, units[i].DefinedWhy = true, fmt.Sprintf("its Kustomization as %s emits it changed", parent.Name)
			}
		}
		if progressed {
			why = reach.Affected(units, change)
		}
	}
	rep := &result.Reach{Base: c.Base.Base, ChangedFiles: len(changed), Units: len(list), Why: map[string]string{}, NotAffectedUnits: []string{}}
	for _, u := range list {
		name := u.Options.Name
		if w := why[name]; w != "" {
			rep.Rendered++
			rep.Why[name] = w
		} else {
			rep.NotAffectedUnits = append(rep.NotAffectedUnits, name)
		}
	}
	rep.NotAffected = len(rep.NotAffectedUnits)
	return &reached{report: rep, reads: reads}, nil
}

// definedIn are the files that define u's source and its
// postBuild.substituteFrom ConfigMaps and Secrets, those of the
// repository.
func (c Config) definedIn(u *config.Unit) []string {
	var files []string
	if src := c.Set.Source(u.Source.Kind, config.Ref{Namespace: u.Source.Namespace, Name: u.Source.Name}); src != nil && src.File != "" {
		files = append(files, src.File)
	}
	for _, ref := range u.SubstituteFrom {
		for _, v := range c.Set.Lookup(ref.Kind, config.Ref{Namespace: u.Ref.Namespace, Name: ref.Name}) {
			files = append(files, v.File)
		}
	}
	return files
}

// emittedAtBase reads the Kustomizations parent emits at the base, by
// ref: nothing when its directory is new.
func (c Config) emittedAtBase(ctx context.Context, parent *config.Unit, list []Unit) (map[config.Ref]*config.Unit, error) {
	i := slices.IndexFunc(list, func(u Unit) bool { return u.Options.Name == parent.Name })
	if i < 0 {
		return nil, errors.New("it is not run")
	}
	unit := list[i]
	o := unit.Options
	if o.Snapshot == nil || o.At == nil {
		return nil, errors.New("it is not built from this checkout")
	}
	dir, err := o.At(ctx, o.Base, o.Dir)
	if err != nil {
		return nil, err
	}
	if dir == nil {
		return map[config.Ref]*config.Unit{}, nil
	}
	o.Dir, o.Snapshot = *dir, nil
	unit.Options = o
	found := c.emittedBy(ctx, unit)
	if found.err != nil {
		return nil, found.err
	}
	set, err := config.ReadObjects(found.objects)
	if err != nil {
		return nil, err
	}
	out := map[config.Ref]*config.Unit{}
	for _, u := range set.Units {
		out[u.Ref] = u
	}
	return out, nil
}

// chartDir says whether f is below a directory holding a Chart.yaml.
func chartDir(root, f string) bool {
	for dir := path.Dir(f); ; dir = path.Dir(dir) {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dir), "Chart.yaml")); err == nil {
			return true
		}
		if dir == "." || dir == "/" {
			return false
		}
	}
}

// definitions are the files the configuration was read from (those
// holding its Kustomizations): a unit's changes there are told by
// comparing its Kustomization with the base's.
func (c Config) definitions() []string {
	var out []string
	for _, u := range c.Set.Units {
		if len(u.EmittedBy) == 0 && !slices.Contains(out, u.File) {
			out = append(out, u.File)
		}
	}
	return out
}

// definesValues says whether the file f (relative to the root) defines
// a ConfigMap or Secret of the configuration: a chart's valuesFrom.
func (c Config) definesValues(f string) bool {
	for _, v := range c.Set.Values {
		if v.File == f {
			return true
		}
	}
	return false
}

// definesSource says whether the file f (relative to the root) defines,
// now, a Flux source: what a chart may be read from (a HelmRepository).
func (c Config) definesSource(ctx context.Context, f string) bool {
	for _, s := range c.Set.Sources {
		if s.File == f {
			return true
		}
	}
	data, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(f)))
	if errors.Is(err, fs.ErrNotExist) {
		// Deleted: what it defined at the base.
		text, gerr := checkout.Git(ctx, c.Root, "show", c.Base.Base+":./"+f)
		data, err = []byte(text), gerr
	}
	return err == nil && bytes.Contains(data, []byte("source.toolkit.fluxcd.io"))
}

// reachLine is one line saying how many units a diff rendered, for
// progress.
func reachLine(r *result.Reach) string {
	line := fmt.Sprintf("%d of %d units rendered: the change since %s (%d file(s)) reaches only those", r.Rendered, r.Units, checkout.Short(r.Base), r.ChangedFiles)
	if len(r.NotAffectedUnits) > 0 {
		line += "; not affected: " + fewOf(r.NotAffectedUnits)
	}
	return line
}

// only are the units of list the change reaches, each waiting only for
// those of them it depends on: one not reached is as it is at the base.
func (r *reached) only(list []Unit) []Unit {
	var out []Unit
	for _, u := range list {
		if r.report.Why[u.Options.Name] == "" {
			continue
		}
		u.DependsOn = slices.DeleteFunc(slices.Clone(u.DependsOn), func(d string) bool { return r.report.Why[d] == "" })
		out = append(out, u)
	}
	return out
}

// needsCRDs says whether the units rendered (heads, by the run's units)
// may need the CustomResourceDefinitions of others: a unit with charts
// (their templates see the CRDs' API versions), one that did not render,
// or an object of a kind Kubernetes does not serve.
func (r *Run) needsCRDs(heads []*pipeline.Rendered) bool {
	for i, u := range r.units {
		if u.Err != nil {
			continue
		}
		h := heads[i]
		if h == nil || len(h.Charts) > 0 {
			return true
		}
		for _, o := range h.Objects {
			if !validate.Builtin(o.GroupVersionKind()) {
				return true
			}
		}
	}
	return false
}

// mayHoldCRDs says whether unit (u in the configuration) may render a
// CustomResourceDefinition: one of another source, or whose reads are
// not known, may; one of this checkout may if a file it reads names the
// kind, or Helm's API (a chart's crds/ directory, its templates).
func (r *Run) mayHoldCRDs(unit Unit, u *config.Unit) bool {
	o := unit.Options
	if o.Snapshot == nil {
		return true
	}
	rs, ok := r.readsOf(o.Name)
	if !ok {
		rs = reach.Static(o.Dir.Root, o.Dir.Rel, u.Components)
	}
	return rs.Unknown != "" || rs.CRDs || rs.Helm
}

func (r *Run) readsOf(name string) (reach.ReadSet, bool) {
	if r.reach == nil {
		return reach.ReadSet{}, false
	}
	rs, ok := r.reach.reads[name]
	return rs, ok
}
