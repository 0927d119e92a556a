package reach

import (
	"cmp"
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
	// sources may be read from anywhere in the repository, below the
	// paths its HelmReleases name (Reads.ChartPaths) when those are known
	// (a unit of another source's are not).
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
// relative to the configuration's root; both sides of a rename).
// Definitions are the configuration's own files: a change there reaches
// a unit only through its Kustomization (Unit.Defined) or Unit.Files.
// Source says whether a file defines a Flux source (a chart may be read
// from), Values whether it defines a ConfigMap or Secret (a chart's
// valuesFrom), ChartDir whether it is below a Chart.yaml.
type Change struct {
	Files       []string
	Definitions []string
	Source      func(file string) bool
	Values      func(file string) bool
	ChartDir    func(file string) bool
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
		read := slices.Contains(c.Definitions, f)
		for _, u := range units {
			if read {
				break
			}
			read = u.Reads.Covers(f) || slices.Contains(u.Files, f)
		}
		if !read {
			unattributed = append(unattributed, f)
		}
	}
	source, values := "", ""
	for _, f := range c.Files {
		if c.Source != nil && c.Source(f) && source == "" {
			source = f
		}
		if c.Values != nil && c.Values(f) && values == "" {
			values = f
		}
	}
	// What a unit whose charts' paths are not known may read: a chart's
	// file, or a YAML file no unit reads (a values file).
	chartFile := ""
	for _, f := range c.Files {
		if c.ChartDir != nil && c.ChartDir(f) {
			chartFile = f
			break
		}
	}
	for _, f := range unattributed {
		if ext := path.Ext(f); chartFile == "" && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			chartFile = f
		}
	}
	for _, u := range units {
		switch {
		case u.Reads.Unknown != "":
			why[u.Name] = "its reads are not known (" + u.Reads.Unknown + ")"
			continue
		case u.Defined:
			why[u.Name] = cmp.Or(u.DefinedWhy, "its Kustomization changed")
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
		if why[u.Name] == "" && u.Charts {
			w := chartReach(u, c.Files, source, chartFile)
			if w == "" && values != "" && (u.Reads.ValuesFrom || u.Reads.Roots == nil) {
				w = "its HelmReleases take values from ConfigMaps or Secrets, and " + values + " defines some"
			}
			if w != "" {
				why[u.Name] = w
			}
		}
	}
	// The dependents of a unit whose CRDs may change, to a fixed point.
	// Along a chain of dependencies too: who depends on a dependent may
	// use the kinds as well.
	viaCRDs := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, u := range units {
			if why[u.Name] != "" {
				continue
			}
			for _, d := range u.DependsOn {
				if dep := find(units, d); dep != nil && why[d] != "" && (dep.CRDs || viaCRDs[d]) {
					why[u.Name] = fmt.Sprintf("it depends on %s, whose CustomResourceDefinitions may change", d)
					viaCRDs[u.Name], changed = true, true
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

// chartReach says why a change reaches u, a unit that renders charts: a
// file below a path its HelmReleases name (a chart of this repository, a
// values file), one defining a source or values (source), or, when its
// charts' paths are not known, any chart's file or YAML file no unit
// reads (chartFile); "" when none.
func chartReach(u Unit, files []string, source, chartFile string) string {
	if source != "" {
		return "it renders Helm charts, and " + source + " defines a source or values a chart may be read with"
	}
	if u.Reads.ChartPathsUnknown || u.Reads.Roots == nil {
		if chartFile != "" {
			return "it renders Helm charts from paths not known, and " + chartFile + " may be a chart's or its values"
		}
		return ""
	}
	for _, f := range files {
		for _, p := range u.Reads.ChartPaths {
			if under(f, p) {
				return "it renders a Helm chart from " + p + ", and " + f + " changed"
			}
		}
	}
	return ""
}
