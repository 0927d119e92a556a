package units

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

// Group is units that may run as one job of a fan-out: with --name set to
// Units, a job runs them in order, and checks in the cluster whatever they
// depend on outside the group.
type Group struct {
	// Name is the first unit's (and the cluster's, when grouped by it).
	Name string `json:"name"`
	// Units, comma-separated in configuration order, for --name.
	Units string `json:"units"`
	// Cluster is the kubeConfig Secret the units name ("" for the
	// default cluster); set when grouped by cluster.
	Cluster string `json:"cluster,omitempty"`
	// Config is the configuration's directory, relative to the
	// repository root; set when grouped by configuration.
	Config string `json:"config,omitempty"`
}

// Plan splits a configuration into groups for parallel jobs: byCluster,
// one group per cluster (kubeConfig Secret); else one group per connected
// set of units (dependencies in either direction), so that no job waits
// for another's units. Groups are in configuration order. A dependency
// cycle is an error, as in a run.
func Plan(set *config.Set, byCluster bool) ([]Group, error) {
	var nodes []Node
	for _, u := range set.Units {
		n := Node{Name: u.Name, Where: fmt.Sprintf("%s:%d", u.File, u.Line)}
		for _, d := range dependencies(u) {
			if dep := set.Unit(d); dep != nil {
				n.DependsOn = append(n.DependsOn, dep.Name)
			}
		}
		nodes = append(nodes, n)
	}
	if _, err := NewGraph(nodes); err != nil {
		return nil, err
	}
	index := map[config.Ref]int{}
	for i, u := range set.Units {
		index[u.Ref] = i
	}
	// Union-find over units joined by a dependency, or by their cluster.
	parent := make([]int, len(set.Units))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	join := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	byName := map[string]int{}
	for i, u := range set.Units {
		if byCluster {
			c := clusterOf(u)
			if j, ok := byName[c]; ok {
				join(i, j)
			} else {
				byName[c] = i
			}
			continue
		}
		for _, d := range dependencies(u) {
			if j, ok := index[d]; ok {
				join(i, j)
			}
		}
	}
	members := map[int][]string{}
	var roots []int
	for i, u := range set.Units {
		r := find(i)
		if _, ok := members[r]; !ok {
			roots = append(roots, r)
		}
		members[r] = append(members[r], u.Name)
	}
	slices.Sort(roots)
	var out []Group
	for _, r := range roots {
		g := Group{Name: set.Units[r].Name, Units: strings.Join(members[r], ",")}
		if byCluster {
			g.Cluster = clusterOf(set.Units[r])
			if g.Cluster != "" {
				g.Name = g.Cluster
			} else {
				g.Name = "default"
			}
		}
		out = append(out, g)
	}
	return out, nil
}

func clusterOf(u *config.Unit) string {
	if u.KubeConfig == nil {
		return ""
	}
	return u.KubeConfig.SecretName
}

// PlanConfigs splits a directory of configurations, one per subdirectory
// (Flux's clusters/<name>/ layout: a cluster per directory), into one
// group per subdirectory holding Kustomizations, named by it, in name
// order. dir is the directory in the repository at root. Every
// configuration is read (and every problem reported) as a run would:
// open, when given, reads a subdirectory that holds Kustomizations as
// apply --config does (with the Kustomizations its units' builds emit),
// and the group lists every unit it found.
func PlanConfigs(root string, dir paths.Dir, open func(path string) (*config.Set, error)) ([]Group, error) {
	entries, err := os.ReadDir(dir.Path)
	if err != nil {
		return nil, err
	}
	var out []Group
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		rel := path.Join(filepath.ToSlash(dir.Rel), e.Name())
		sub := filepath.Join(dir.Path, e.Name())
		set, err := config.Read(root, sub)
		if err == nil && len(set.Units) == 0 {
			continue // no configuration
		}
		if err == nil && open != nil {
			set, err = open(sub)
		}
		if err == nil {
			_, err = Plan(set, false) // a cycle fails the plan, not the job
		}
		if err == nil {
			err = CheckPaths(root, set) // and so does a path that is not there
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("configuration %s: %w", rel, explain(err)))
			continue
		}
		var names []string
		for _, u := range set.Units {
			names = append(names, u.Name)
		}
		out = append(out, Group{Name: e.Name(), Units: strings.Join(names, ","), Config: rel})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no subdirectory of %s holds Flux Kustomizations", dir.Rel)
	}
	return out, nil
}
