package reach

import (
	"fmt"
	"path"
	"slices"
)

// Unit is what tells whether a change reaches one unit of a
// configuration.
type Unit struct {
	Name string
	// Reads are what its build reads (Static), for a unit built from
	// this checkout; a unit of another source reads nothing of it.
	Reads ReadSet
	// Defined says its own Kustomization is new or changed since the base,
	// as its file holds it or its parent emits it; DefinedWhy says how.
	Defined    bool
	DefinedWhy string
	// Files are other files of the repository it reads: those defining
	// its source and its postBuild.substituteFrom ConfigMaps and Secrets.
	Files []string
	// Charts says it may render Helm charts: a chart's files, values and
	// sources may be read from anywhere in the repository.
	Charts bool
	// CRDs says what it renders may hold CustomResourceDefinitions: the
	// units that depend on it are reached with it (their custom
	// resources are checked against them).
	CRDs bool
	// DependsOn are the units it waits for (dependsOn, and the unit that
	// emitted it).
	DependsOn []string
}

// Change is what a pull request changed: its files (slash-separated,
// relative to the configuration's root; both sides of a rename), and
// Chart, which says whether a file may be a chart's (below a Chart.yaml)
// or define a chart's source (a HelmRepository, an OCIRepository, a
// GitRepository).
type Change struct {
	Files []string
	Chart func(file string) bool
}

// Affected returns the units c reaches, with why, by name; the others
// are not affected: rendering them would give what their base gives.
// A unit is reached when
//   - its read set is unknown (rendered whatever changed);
//   - a file its build reads changed (below one of its Reads);
//   - its own Kustomization is new or changed (Defined);
//   - a file defining its source or its substituteFrom values changed;
//   - it may render charts (Charts) and a file no unit reads changed that
//     may be a chart's or its values (a YAML file, or one below a
//     Chart.yaml), or one defining a chart's source;
//   - a unit it depends on is reached and may render
//     CustomResourceDefinitions (CRDs).
func Affected(units []Unit, c Change) map[string]string {
	why := map[string]string{}
	var unattributed []string
	for _, f := range c.Files {
		read := false
		for _, u := range units {
			if u.Reads.Covers(f) || slices.Contains(u.Files, f) {
				read = true
				break
			}
		}
		if !read {
			unattributed = append(unattributed, f)
		}
	}
	chartFile := ""
	for _, f := range c.Files {
		if c.Chart != nil && c.Chart(f) {
			chartFile = f
			break
		}
	}
	if chartFile == "" {
		for _, f := range unattributed {
			if ext := path.Ext(f); ext == ".yaml" || ext == ".yml" || ext == ".json" || ext == ".tpl" {
				chartFile = f
				break
			}
		}
	}
	for _, u := range units {
		switch {
		case u.Reads.Unknown != "":
			why[u.Name] = "its reads are not known (" + u.Reads.Unknown + ")"
		case u.Defined:
			why[u.Name] = u.DefinedWhy
		}
		if why[u.Name] != "" {
			continue
		}
		for _, f := range c.Files {
			if u.Reads.Covers(f) {
				why[u.Name] = "it reads " + f
				break
			}
			if slices.Contains(u.Files, f) {
				why[u.Name] = "its source or values are defined in " + f
				break
			}
		}
		if why[u.Name] == "" && u.Charts && chartFile != "" {
			why[u.Name] = "it renders Helm charts, and " + chartFile + " may be a chart's, its values or its source"
		}
	}
	// The dependents of a unit whose CRDs may change, to a fixed point.
	for changed := true; changed; {
		changed = false
		for _, u := range units {
			if why[u.Name] != "" {
				continue
			}
			for _, d := range u.DependsOn {
				if dep := find(units, d); dep != nil && dep.CRDs && why[d] != "" {
					why[u.Name] = fmt.Sprintf("it depends on %s, whose CustomResourceDefinitions may change", d)
					changed = true
					break
				}
			}
		}
	}
	return why
}

func find(units []Unit, name string) *Unit {
	for i := range units {
		if units[i].Name == name {
			return &units[i]
		}
	}
	return nil
}
