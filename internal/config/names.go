package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// unitName is the rule of inventory.ValidateName (a DNS label of at most
// 63 characters: it names an inventory Secret and a label value), kept
// here so this reader does not import the engine; a test holds the two
// together.
var unitName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

const maxUnitName = 63

func validateUnitName(name string) error {
	if len(name) > maxUnitName || !unitName.MatchString(name) {
		return fmt.Errorf("unit name %q is not valid: use at most %d lower-case letters, digits and '-', starting and ending with a letter or digit", name, maxUnitName)
	}
	return nil
}

// nameUnits gives every unit its name: metadata.name, or
// "<namespace>-<name>" when another unit has the same metadata.name, since
// units share one inventory namespace. Names must be valid unit names
// (they name an inventory Secret and a label value) and distinct.
func nameUnits(units []*Unit) []*Error {
	byName := map[string][]*Unit{}
	for _, u := range units {
		byName[u.Ref.Name] = append(byName[u.Ref.Name], u)
	}
	var errs []*Error
	taken := map[string]*Unit{}
	for _, u := range units {
		fail := func(field, format string, args ...any) {
			errs = append(errs, &Error{File: u.File, Line: u.Line, Object: kustomizationKind + " " + u.Ref.String(), Field: field, Msg: fmt.Sprintf(format, args...)})
		}
		u.Name = u.Ref.Name
		var other *Unit
		if same := byName[u.Ref.Name]; len(same) > 1 {
			other = same[0]
			if other == u {
				other = same[1]
			}
			u.Name = u.Ref.Namespace + "-" + u.Ref.Name
		}
		if err := validateUnitName(u.Name); err != nil {
			if other == nil {
				fail("metadata.name", "%v", err)
			} else {
				fail("", "shares its name with Kustomization %s (%s:%d), so its unit needs the namespace: %v", other.Ref, other.File, other.Line, err)
			}
			continue
		}
		if t, ok := taken[u.Name]; ok {
			fail("", "unit name %q is also the unit name of Kustomization %s (%s:%d): rename one of them", u.Name, t.Ref, t.File, t.Line)
			continue
		}
		taken[u.Name] = u
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
