package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// set decides, over every Kustomization read, which run and under which
// unit names. Every Kustomization read runs: one left out would leave
// the configuration, and the next apply would garbage-collect its unit.
func (r *reader) set() (*Set, []*Error) {
	s := &Set{Values: r.values, Sources: r.sources, Generators: r.generators, Notifications: r.notifications}
	if errs := duplicates(r.kustomizations); len(errs) > 0 {
		return nil, errs
	}
	r.addInstances(s)
	for _, k := range r.kustomizations {
		// Flux's own sync (flux bootstrap's flux-system, path
		// ./clusters/<name>) applies the configuration's directory:
		// the Namespaces, ServiceAccounts and RoleBindings beside the
		// Kustomizations, and the Kustomizations themselves, which the
		// run finds by building it (see Set.Add).
		k.unit.Sync = r.sync(k.unit)
		s.Units = append(s.Units, k.unit)
		s.Notes = append(s.Notes, k.notes...)
	}
	// The sync first: every other unit of its directory runs after it.
	slices.SortStableFunc(s.Units, func(a, b *Unit) int {
		switch {
		case a.Sync == b.Sync:
			return 0
		case a.Sync:
			return -1
		}
		return 1
	})
	if errs := nameUnits(s.Units); len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// sync says whether u is Flux's own sync of the configuration: a
// Kustomization whose path, in this checkout's tree, is the
// configuration's directory, or a directory above its own file (it
// applies itself, as flux bootstrap's gotk-sync.yaml does). Only a
// GitRepository can be this checkout: a Kustomization of an OCIRepository,
// a Bucket or an artifact builds that source's tree whatever its path
// says. The root of the source (path "./", a tenant's repository as a
// rule) is the sync only of a configuration that is the checkout's root,
// or given as the sync's own file.
func (r *reader) sync(u *Unit) bool {
	if u.Source.Kind != GitRepositoryKind && !u.Instance {
		// A FluxInstance's sync of any kind is Flux's own sync: its
		// source is, by its own word, what this repository serves.
		return false
	}
	if u.Path == r.dir {
		return true
	}
	if u.Path == "." {
		return r.single
	}
	return strings.HasPrefix(u.File, u.Path+"/")
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
