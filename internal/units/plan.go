package units

import (
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
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
}

// Plan splits a configuration into groups for parallel jobs: byCluster,
// one group per cluster (kubeConfig Secret); else one group per connected
// set of units (dependencies in either direction), so that no job waits
// for another's units. Groups are in configuration order. A dependency
// cycle is an error, as in a run.
func Plan(set *config.Set, byCluster bool) ([]Group, error) {
	var nodes []Node
	for _, u := range set.Units {
		n := Node{Name: u.Name}
		for _, d := range u.DependsOn {
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
		for _, d := range u.DependsOn {
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
