package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Flux reaches most Kustomizations by building: flux bootstrap's
// flux-system Kustomization applies ./clusters/<name>, which holds the
// others; a tenants Kustomization applies each tenant's GitRepository and
// Kustomization; a root Kustomization applies apps/kustomization.yaml,
// whose resources are every app's ks.yaml. kustomize-controller then
// reconciles what was applied. Without it, a run reads what each unit's
// build emits (units' discovery) and adds it to the Set: Kustomizations
// become units, sources and ConfigMaps and Secrets are what they resolve
// against.

// Object is a Flux object, or a ConfigMap or Secret, that a unit's build
// emitted: its YAML, and where it came from.
type Object struct {
	// File is the file it came from, relative to its source's root;
	// Line its line there (0 when unknown: a generator or patch made it).
	File string
	Line int
	// Object is the object as the build emitted it, read as it is (no
	// YAML in between); YAML, its text, when Object is nil.
	Object map[string]any
	YAML   []byte
	// Locate, when set, finds where a text is written in the files the
	// object was built from ("file:line", "" when nowhere): the patch that
	// added an argument to a controller's Deployment (see Lockdown).
	Locate func(text string) string
}

// ReadObjects reads objects a build emitted as Read reads files: the
// same fields, the same checks, every problem an *Error naming the object
// and its file (at the object's line). The Set it returns holds what
// they are, for Add; its Kustomizations are not named yet.
func ReadObjects(objs []Object) (*Set, error) {
	r := &reader{emitted: true}
	var errs []error
	for _, o := range objs {
		var problems []*Error
		if name, namespace, args, ok := controllerArgs(o.Object); ok {
			// A Flux controller's Deployment: its lockdown flags are
			// read, the rest is the controller's.
			l, notes := controllerLockdown(name, namespace, args, o.File, o.Line, o.Locate)
			r.lockdowns, r.notes = append(r.lockdowns, l), append(r.notes, notes...)
			continue
		}
		if o.Object != nil {
			problems = r.node(o.File, o.Line, nodeOf(o.Object), &objectText{object: o.Object})
		} else {
			problems = r.document(o.File, document{text: o.YAML, line: o.Line})
		}
		for _, e := range problems {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if problems := duplicates(r.kustomizations); len(problems) > 0 {
		return nil, joinProblems(problems)
	}
	s := &Set{Values: r.values, Sources: r.sources, Generators: r.generators, Notifications: r.notifications}
	r.addInstances(s)
	for _, k := range r.kustomizations {
		s.Units = append(s.Units, k.unit)
		s.Notes = append(s.Notes, k.notes...)
	}
	return s, nil
}

// MaxDepth bounds how deep Kustomizations are found by building: a
// Kustomization that a chain of this many others emitted emits no more.
const MaxDepth = 10

// Add adds to s what the build of its unit parent emitted (found, read
// by ReadObjects), as kustomize-controller would reach it, and returns
// the units added, not yet named (see Name). A Kustomization of parent's
// own chain (Flux's sync applying itself) is not run again; one that s
// already holds with the same spec is the same object reached twice
// (read from a file of the configuration, it now runs after parent, which
// applies what it needs, as in Flux); with another spec it is an error
// naming both. Sources, generators, ConfigMaps, Secrets and notes are
// added unless s has them already.
func (s *Set) Add(parent *Unit, found *Set) ([]*Unit, error) {
	chain := append(slices.Clone(parent.EmittedBy), parent.Ref)
	var added []*Unit
	var errs []error
	for _, u := range found.Units {
		where := fmt.Sprintf("emitted by %s", chainString(chain))
		switch {
		case slices.Contains(chain, u.Ref):
			s.Notes = append(s.Notes, fmt.Sprintf("Kustomization %s, %s, is not run again: it is one of the Kustomizations that emitted it (Flux's own sync applies itself)", u.Ref, where))
			s.adoptAccount(u, where)
			continue
		case len(chain) > MaxDepth:
			errs = append(errs, &Error{File: u.File, Line: u.Line, Object: kustomizationKind + " " + u.Ref.String(),
				Msg: fmt.Sprintf("%s: more than %d Kustomizations deep; is it a loop?", where, MaxDepth)})
			continue
		}
		if other := s.Unit(u.Ref); other != nil {
			if !sameSpec(other, u) {
				errs = append(errs, &Error{File: u.File, Line: u.Line, Object: kustomizationKind + " " + u.Ref.String(),
					Msg: fmt.Sprintf("%s, is also defined by %s with another spec: which one Flux would apply depends on the order it reconciles them; keep one", where, origin(other))})
			} else if len(other.EmittedBy) == 0 && !other.Sync {
				// Read from a file of the configuration, and applied by
				// parent (the sync applying the directory it is in): in
				// Flux it exists once parent has applied it.
				other.EmittedBy = chain
			}
			continue
		}
		u.EmittedBy = chain
		s.Units = append(s.Units, u)
		added = append(added, u)
	}
	for _, src := range found.Sources {
		if have := s.Source(src.Kind, src.Ref); have == nil {
			s.Sources = append(s.Sources, src)
		} else if have.URL != src.URL || have.GitRef != src.GitRef {
			errs = append(errs, &Error{File: src.File, Line: src.Line, Object: src.Kind + " " + src.Ref.String(),
				Msg: fmt.Sprintf("emitted by %s, is also defined at %s:%d as %s: keep one", chainString(chain), have.File, have.Line, or(have.URL, "no spec.url"))})
		}
	}
	for _, g := range found.Generators {
		if !slices.ContainsFunc(s.Generators, func(h *Generator) bool { return h.Ref == g.Ref }) {
			s.Generators = append(s.Generators, g)
		}
	}
	for _, v := range found.Values {
		if !slices.ContainsFunc(s.Values, func(w *Values) bool { return w.Kind == v.Kind && w.Ref == v.Ref && w.File == v.File }) {
			s.Values = append(s.Values, v)
		}
	}
	s.mergeLockdown(found.Lockdown)
	s.addNotifications(found.Notifications, chain)
	for _, n := range found.Notes { // a Kustomization reached again says again what it said
		if !slices.Contains(s.Notes, n) {
			s.Notes = append(s.Notes, n)
		}
	}
	return added, errors.Join(errs...)
}

// adoptAccount gives the unit of s that emitted itself as u the service
// account u names: once the sync has applied itself, Flux reconciles it
// as its build made it, and the lockdown patches it with
// serviceAccountName: kustomize-controller (flux2-multi-tenancy's
// flux-system/kustomization.yaml), which gotk-sync.yaml lacks.
func (s *Set) adoptAccount(u *Unit, where string) {
	own := s.Unit(u.Ref)
	if own == nil || u.ServiceAccountName == "" || own.ServiceAccountName == u.ServiceAccountName {
		return
	}
	own.SelfAccount = u.ServiceAccountName
	s.Notes = append(s.Notes, fmt.Sprintf("Kustomization %s: spec.serviceAccountName %s, as %s, it applies itself with it", u.Ref, u.ServiceAccountName, where))
}

// Name names every unit of s (see Set's Units), once units were added.
func (s *Set) Name() error {
	if problems := nameUnits(s.Units); len(problems) > 0 {
		return joinProblems(problems)
	}
	return nil
}

// sameSpec says whether a and b are one Kustomization, wherever each was
// found.
func sameSpec(a, b *Unit) bool {
	x, y := *a, *b
	x.Name, x.File, x.Line, x.EmittedBy, x.Sync, x.Refused, x.Document, x.SelfAccount = "", "", 0, nil, false, nil, nil, ""
	y.Name, y.File, y.Line, y.EmittedBy, y.Sync, y.Refused, y.Document, y.SelfAccount = "", "", 0, nil, false, nil, nil, ""
	return reflect.DeepEqual(x, y)
}

// origin says where u was found, for messages.
func origin(u *Unit) string {
	at := u.File
	if u.Line > 0 {
		at = fmt.Sprintf("%s:%d", u.File, u.Line)
	}
	if len(u.EmittedBy) == 0 {
		return at
	}
	return fmt.Sprintf("%s, emitted by %s", at, chainString(u.EmittedBy))
}

// Chain names the Kustomizations that emitted u, and u, for messages:
// "flux-system/flux-system > flux-system/apps > default/podinfo"; just
// u's ref for one read from a file.
func (u *Unit) Chain() string {
	return chainString(append(slices.Clone(u.EmittedBy), u.Ref))
}

func chainString(refs []Ref) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = r.String()
	}
	return strings.Join(parts, " > ")
}

func joinProblems(problems []*Error) error {
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// SameSpec says whether a and b are one Kustomization, wherever each was
// found (file, line, the chain that emitted it and comments aside): what
// tells that a pull request left a unit's own definition as it was.
func SameSpec(a, b *Unit) bool { return sameSpec(a, b) }
