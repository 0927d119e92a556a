package config

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// fluxSync is why a Kustomization that applies the directory of
// Kustomizations is not run.
const fluxSync = "applies the directory of Kustomizations itself (Flux's own sync); kustomize-deploy runs the Kustomizations it holds instead"

// set decides, over every Kustomization read, which run and under which
// unit names.
func (r *reader) set() (*Set, []*Error) {
	s := &Set{Values: r.values, Sources: r.sources, Generators: r.generators, Notifications: r.notifications}
	if errs := duplicates(r.kustomizations); len(errs) > 0 {
		return nil, errs
	}
	r.addInstances(s)

	// A Kustomization whose path holds a file of Kustomizations would apply
	// them as objects: that is Flux's flux-system sync (path
	// ./clusters/<name>, which holds flux-system/gotk-sync.yaml). This run
	// stands in for it.
	var dirs []string
	for _, k := range r.kustomizations {
		dirs = append(dirs, path.Dir(k.unit.File))
	}
	dirs = append(dirs, r.dir)
	var run []*kustomization
	for _, k := range r.kustomizations {
		if r.single && holdsAny(k.unit.Path, []string{r.dir}) {
			// The configuration is this one file: the Kustomization that
			// applies the directory around it is its root (Flux's own
			// gotk-sync.yaml), run to find the Kustomizations it applies.
			k.unit.Sync = true
			run = append(run, k)
			continue
		}
		if holdsAny(k.unit.Path, dirs) {
			s.Ignored = append(s.Ignored, Ignored{Ref: k.unit.Ref, File: k.unit.File, Line: k.unit.Line, Why: fluxSync,
				Sync: true, Source: k.unit.Source})
			continue
		}
		run = append(run, k)
	}

	for _, k := range run {
		s.Units = append(s.Units, k.unit)
		s.Notes = append(s.Notes, k.notes...)
		s.dropSyncDependencies(k.unit)
	}
	if errs := nameUnits(s.Units); len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// holdsAny says whether directory p (relative to the root) is one of dirs
// or above one.
func holdsAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == "." || d == p || strings.HasPrefix(d, p+"/") {
			return true
		}
	}
	return false
}

// duplicates reports Kustomizations defined twice, naming both places.
func duplicates(ks []*kustomization) []*Error {
	first := map[Ref]*Unit{}
	var errs []*Error
	for _, k := range ks {
		u := k.unit
		if f, ok := first[u.Ref]; ok {
			errs = append(errs, &Error{File: u.File, Line: u.Line, Object: kustomizationKind + " " + u.Ref.String(),
				Msg: fmt.Sprintf("defined again: first in %s:%d", f.File, f.Line)})
			continue
		}
		first[u.Ref] = u
	}
	return errs
}

// Unit returns the unit ref names, or nil.
func (s *Set) Unit(ref Ref) *Unit {
	for _, u := range s.Units {
		if u.Ref == ref {
			return u
		}
	}
	return nil
}

// Refusals joins the problems of every refused unit (see Unit.Refused),
// in unit order, each unit's by line; nil when none is.
func (s *Set) Refusals() error {
	var errs []error
	for _, u := range s.Units {
		for _, e := range u.Refused {
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}
