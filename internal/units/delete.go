package units

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// ErrNoCluster is a delete of a configuration with no cluster to delete
// from.
var ErrNoCluster = errors.New("deleting needs a cluster")

// Delete deletes the units of the run (the whole configuration, or those
// of Spec.Only) as deleting their Kustomizations would in Flux: each per
// the deletion policy its inventory recorded (Delete, WaitForTermination,
// Orphan; a suspended unit keeps its objects), every unit after the units
// that depend on it (a Namespace outlives the units in it), and none of
// those a unit whose deletion failed depends on. A unit with no inventory
// has nothing to delete: a success that says so. All of them count
// against the prune budget, as garbage collection does: more units than
// its MaxUnits, or their objects all together over Max or of a Protect
// kind, and none is deleted, unless Allow.
func (r *Run) Delete(ctx context.Context) (*result.Set, error) {
	start := time.Now()
	invs := make([]*inventory.Inventory, len(r.units))
	var list []gone
	for i, u := range r.units {
		if u.Cluster == nil {
			return nil, ErrNoCluster
		}
		ns := u.Cluster.NamespaceOr(r.cfg.Base.InventoryNamespace)
		inv, err := inventory.Load(ctx, u.Cluster.Client, ns, u.Options.Name)
		if err != nil {
			return nil, fmt.Errorf("unit %s: %w", display(u), err)
		}
		if invs[i] = inv; inv != nil {
			list = append(list, gone{cl: u.Cluster, inv: inv})
		}
	}
	budget := r.cfg.checkDelete(list)
	nodes := make([]Node, len(r.units))
	for i, u := range r.units {
		nodes[i] = Node{Name: u.Options.Name, Where: u.Where}
	}
	for i, u := range r.units {
		for _, dep := range u.DependsOn { // reversed: a unit waits for its dependents
			for j := range nodes {
				if nodes[j].Name == dep {
					nodes[j].DependsOn = append(nodes[j].DependsOn, nodes[i].Name)
				}
			}
		}
	}
	g, err := NewGraph(nodes)
	if err != nil {
		return nil, err
	}
	out := g.Run(ctx, r.opts.Parallel,
		func(ctx context.Context, i int) Outcome {
			u, inv := r.units[i], invs[i]
			switch {
			case inv == nil:
				return Outcome{Result: r.nothingToDelete(u), Satisfied: true}
			case budget != nil:
				return Outcome{Result: r.cfg.refused(gone{cl: u.Cluster, inv: inv}, result.ModeDelete, budget)}
			}
			res := r.cfg.remove(ctx, u.Cluster, inv, "deleted with its configuration")
			return Outcome{Result: res, Satisfied: res.Ready}
		},
		func(i int, blockers []string) Outcome {
			u := r.units[i]
			if len(blockers) == 0 {
				return Outcome{Result: cancelled(u, result.ModeDelete)}
			}
			res := &result.Result{Unit: u.Options.Name, Mode: result.ModeDelete, Revision: r.cfg.Base.Revision, StartedAt: time.Now().UTC(), Entries: []result.Entry{},
				Reason: result.ReasonDependencyNotReady, Message: fmt.Sprintf("not deleted: %s, which depend(s) on it, could not be deleted", strings.Join(blockers, ", "))}
			return Outcome{Result: res}
		})
	set := &result.Set{Mode: result.ModeDelete, StartedAt: start.UTC(), Ready: true}
	for _, o := range out {
		set.Units = append(set.Units, o.Result)
		set.Ready = set.Ready && !o.Result.Failed()
	}
	set.Duration = time.Since(start).Round(time.Millisecond).String()
	return set, nil
}

// checkDelete checks the deletion of list, every unit of a configuration
// that has an inventory, against the budget (see Delete).
func (c Config) checkDelete(list []gone) error {
	err := c.checkGone(list)
	var ce *prune.CollectError
	if errors.As(err, &ce) {
		ce.Deleting = true
	}
	return err
}

// nothingToDelete is the result of deleting unit u, which has no
// inventory: deleted already, or never applied.
func (r *Run) nothingToDelete(u Unit) *result.Result {
	msg := fmt.Sprintf("unit %s has no inventory in namespace %s: nothing to delete", u.Options.Name, u.Cluster.NamespaceOr(r.cfg.Base.InventoryNamespace))
	return &result.Result{Unit: u.Options.Name, Mode: result.ModeDelete, Revision: r.cfg.Base.Revision, StartedAt: time.Now().UTC(), Entries: []result.Entry{},
		Ready: true, Reason: result.ReasonDeleteSucceed, Message: msg, Notes: []string{msg}, Duration: "0s"}
}
