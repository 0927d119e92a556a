package helm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// order sets each chart's Level from the dependsOn of the unit's
// HelmReleases: a release depending on none of the unit's is at level 0,
// one depending on a release at level n at n+1. A dependency that is not
// in the unit is noted (the unit's own dependsOn orders units); a cycle
// is an error naming its releases.
func order(charts []Chart, lineOf func(string, object.ID) int) ([]string, error) {
	index := map[string]int{}
	for i, c := range charts {
		index[c.Release.Namespace+"/"+c.Release.Name] = i
	}
	var notes []string
	const unvisited, visiting = -2, -1
	level := make([]int, len(charts))
	for i := range level {
		level[i] = unvisited
	}
	var visit func(i int, path []string) error
	visit = func(i int, path []string) error {
		switch level[i] {
		case visiting:
			start := slices.Index(path, charts[i].Release.String())
			return fmt.Errorf("spec.dependsOn: HelmReleases depend on each other in a cycle: %s", strings.Join(append(path[start:], charts[i].Release.String()), " → "))
		case unvisited:
		default:
			return nil
		}
		level[i] = visiting
		path = append(path, charts[i].Release.String())
		depth := 0
		for _, d := range charts[i].DependsOn {
			j, ok := index[d.Namespace+"/"+d.Name]
			if !ok {
				continue
			}
			if err := visit(j, path); err != nil {
				return err
			}
			depth = max(depth, level[j]+1)
		}
		level[i] = depth
		return nil
	}
	for i, c := range charts {
		if err := visit(i, nil); err != nil {
			return nil, atRelease(c.Release, c.id, c.Source, lineOf, err)
		}
		for _, d := range c.DependsOn {
			if _, ok := index[d.Namespace+"/"+d.Name]; !ok {
				notes = append(notes, fmt.Sprintf("%s (%s): spec.dependsOn %s/%s is not in this unit: the unit runs after the units its own dependsOn names, not after that HelmRelease", c.Release, c.Source, d.Namespace, d.Name))
			}
		}
	}
	for i := range charts {
		charts[i].Level = level[i]
	}
	return notes, nil
}
