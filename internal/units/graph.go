// Package units runs the units of one configuration (Flux Kustomizations)
// the way Flux's kustomize-controller reconciles a cluster's
// Kustomizations: each unit once every unit it depends on has succeeded,
// independent units in parallel; when a unit fails, its dependents are
// skipped with DependencyNotReady and unrelated units go on.
package units

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Node is a unit as the graph sees it.
type Node struct {
	Name string
	// DependsOn names units of this run; dependencies outside it are the
	// unit's own business (it checks them in the cluster).
	DependsOn []string
	// Where the unit is defined (file:line), for errors; may be empty.
	Where string
	// Ready, by dependency, says whether that dependency lets the unit
	// run once it has ended, in place of its Satisfied (a readyExpr):
	// nil when it does, else why not.
	Ready map[string]func(Outcome) error
}

// String names the node in errors, with where it is defined.
func (n Node) String() string {
	if n.Where == "" {
		return n.Name
	}
	return n.Name + " (" + n.Where + ")"
}

// Graph is the units of a run and the order they may run in.
type Graph struct {
	nodes      []Node
	deps       [][]int // indexes of each node's dependencies
	dependents [][]int
	ready      []map[int]func(Outcome) error // Node.Ready, by index
}

// NewGraph checks that names are unique, that every dependency is a node,
// and that there is no cycle; the errors name the units involved.
func NewGraph(nodes []Node) (*Graph, error) {
	g := &Graph{nodes: nodes, deps: make([][]int, len(nodes)), dependents: make([][]int, len(nodes))}
	g.ready = make([]map[int]func(Outcome) error, len(nodes))
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if first, dup := index[n.Name]; dup {
			if n.Where == "" {
				return nil, fmt.Errorf("unit %s is defined twice", n.Name)
			}
			return nil, fmt.Errorf("unit %s is defined twice: at %s and at %s", n.Name, nodes[first].Where, n.Where)
		}
		index[n.Name] = i
	}
	for i, n := range nodes {
		for _, d := range n.DependsOn {
			j, ok := index[d]
			if !ok {
				return nil, fmt.Errorf("unit %s depends on %s, which is not in this run", n, d)
			}
			g.deps[i] = append(g.deps[i], j)
			g.dependents[j] = append(g.dependents[j], i)
			if ready := n.Ready[d]; ready != nil {
				if g.ready[i] == nil {
					g.ready[i] = map[int]func(Outcome) error{}
				}
				g.ready[i][j] = ready
			}
		}
	}
	if cycle := g.cycle(); cycle != nil {
		return nil, fmt.Errorf("dependency cycle: %s", strings.Join(cycle, " → "))
	}
	return g, nil
}

// cycle returns the nodes along a dependency cycle, with where each is
// defined, the first one's name repeated at the end; or nil.
func (g *Graph) cycle() []string {
	const (
		unvisited = iota
		onPath
		finished
	)
	state := make([]int, len(g.nodes))
	var path []int
	var visit func(i int) []string
	visit = func(i int) []string {
		state[i] = onPath
		path = append(path, i)
		for _, j := range g.deps[i] {
			switch state[j] {
			case onPath:
				var names []string
				for k := len(path) - 1; k >= 0; k-- { // from j along the path back to i
					if path[k] == j {
						for _, p := range path[k:] {
							names = append(names, g.nodes[p].String())
						}
						break
					}
				}
				return append(names, g.nodes[j].Name)
			case unvisited:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = finished
		return nil
	}
	for i := range g.nodes {
		if state[i] == unvisited {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

// Outcome is how one unit's turn ended.
type Outcome struct {
	Result *result.Result
	// Satisfied says the unit's dependents may run: it is Ready (a unit
	// skipped on purpose may be, from its last run).
	Satisfied bool
}

// Run gives every unit its turn: run once all its dependencies are
// satisfied, at most parallel at a time, units ready together in the
// order of the nodes. A unit with an unsatisfied dependency does not run:
// skip is called with the names of those dependencies; so is it, with
// none, for units not started before ctx ended. The outcomes are in the
// order of the nodes.
func (g *Graph) Run(ctx context.Context, parallel int, run func(ctx context.Context, i int) Outcome, skip func(i int, blockers []string) Outcome) []Outcome {
	parallel = max(parallel, 1)
	n := len(g.nodes)
	out := make([]Outcome, n)
	const (
		waiting = iota
		running
		done
	)
	state := make([]int, n)
	finished := make(chan int, n)
	var wg sync.WaitGroup
	active, completed := 0, 0
	// blockers are the dependencies of i that ended unsatisfied (each
	// with why, when its Node.Ready said); ok is false while one has not
	// ended yet.
	blockers := func(i int) (names []string, ok bool) {
		for _, j := range g.deps[i] {
			if state[j] != done {
				return nil, false
			}
			if ready := g.ready[i][j]; ready != nil {
				if err := ready(out[j]); err != nil {
					names = append(names, fmt.Sprintf("%s (%v)", g.nodes[j].Name, err))
				}
				continue
			}
			if !out[j].Satisfied {
				names = append(names, g.nodes[j].Name)
			}
		}
		return names, true
	}
	for completed < n {
		progressed := true
		for progressed { // skipping a unit may unblock (the skip of) another
			progressed = false
			for i := range g.nodes {
				if state[i] != waiting {
					continue
				}
				b, ok := blockers(i)
				if ctx.Err() != nil {
					b, ok = nil, true // the run ends: nothing more starts
				}
				switch {
				case !ok:
				case len(b) > 0 || ctx.Err() != nil:
					out[i], state[i] = skip(i, b), done
					completed++
					progressed = true
				case active < parallel:
					state[i] = running
					active++
					wg.Add(1)
					go func() {
						defer wg.Done()
						out[i] = run(ctx, i)
						finished <- i
					}()
				}
			}
		}
		if completed == n {
			break
		}
		i := <-finished
		state[i] = done
		active--
		completed++
	}
	wg.Wait()
	return out
}

// Ancestors are the indexes of the nodes node i waits for, directly or
// through others: those that have run before it, in no order.
func (g *Graph) Ancestors(i int) []int {
	seen := map[int]bool{}
	var out []int
	var walk func(int)
	walk = func(n int) {
		for _, d := range g.deps[n] {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
				walk(d)
			}
		}
	}
	walk(i)
	return out
}
