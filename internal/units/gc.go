package units

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// gone is a unit that left the configuration, found by its inventory on
// the cluster cl.
type gone struct {
	cl  *kube.Clients
	inv *inventory.Inventory
}

// deletes says whether collecting the unit deletes its objects: not when
// it was suspended (it loses its inventory and keeps its objects, as in
// Flux) or its deletion policy is Orphan.
func (g gone) deletes() bool {
	return !g.inv.Status.Suspended && g.inv.Status.DeletionPolicy != "Orphan"
}

// findGone lists the units that left the configuration: every inventory,
// in the inventory namespace of each cluster units runs on and of the
// default cluster, recorded as applied from c.ID, whose unit is no longer
// in the configuration. It writes nothing.
//
// A unit still in the configuration is never collected, whatever cluster
// its inventory is found in: two kubeconfigs may reach one cluster (as
// different users), and which cluster a kubeconfig reaches cannot be
// proved. A unit moved to another cluster leaves its inventory behind.
func (c Config) findGone(ctx context.Context, units []Unit) ([]gone, error) {
	if c.ID == "" {
		return nil, nil
	}
	if len(c.undiscovered) > 0 {
		var names []string
		for _, u := range c.Set.Units {
			if c.undiscovered[u.Ref] != nil {
				names = append(names, u.Name)
			}
		}
		return nil, fmt.Errorf("no unit is garbage-collected: %d unit(s) (%s) could not be built, so which Kustomizations the configuration holds is not known", len(names), fewOf(names))
	}
	def, _, err := c.Cluster(nil)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, u := range c.Set.Units {
		keep[u.Name] = true
	}
	seen := map[*kube.Clients]bool{def: true}
	clusters := []*kube.Clients{def}
	for _, u := range units {
		if !seen[u.Cluster] {
			seen[u.Cluster] = true
			clusters = append(clusters, u.Cluster)
		}
	}
	var out []gone
	for _, cl := range clusters {
		ns := cl.NamespaceOr(c.Base.InventoryNamespace)
		invs, ok := c.preloaded[cl]
		if ok && !slices.ContainsFunc(invs, func(inv *inventory.Inventory) bool { return inv.Status.Config == c.ID && !keep[inv.Name] }) {
			// Listed as the run began: no unit of this run writes the
			// inventory of a unit that left, so the list could only miss
			// one another run wrote since, which the next run collects.
			// One found is acted on as listed now.
			continue
		}
		invs, err := inventory.List(ctx, cl.Client, ns)
		if err != nil {
			return out, err
		}
		for _, inv := range invs {
			if inv.Status.Config == c.ID && !keep[inv.Name] {
				out = append(out, gone{cl: cl, inv: inv})
			}
		}
	}
	return out, nil
}

// checkGone checks the collection of list against the run's budget
// (c.Base.PruneBudget): more than MaxUnits units, or objects to delete
// over Max or of a Protect kind, all units together, is refused unless
// Allow (force-prune, a pull request's label).
func (c Config) checkGone(list []gone) error {
	var names []string
	var ids []object.ID
	for _, g := range list {
		names = append(names, g.inv.Name)
		if g.deletes() {
			for _, e := range g.inv.Entries {
				ids = append(ids, e.ID)
			}
		}
	}
	return c.Base.PruneBudget.CheckCollect(names, ids)
}

// collectGone garbage-collects the units that left the configuration
// (findGone), each per its recorded deletion policy: Delete (its objects,
// with prune's safeguards, then its inventory), WaitForTermination (the
// same, waiting until the objects are gone) or Orphan (its inventory
// only); a unit that was suspended keeps its objects and loses its
// inventory, as Flux does. Over the budget (checkGone), none is: each
// fails, listing the objects it keeps. It returns one result per unit.
func (c Config) collectGone(ctx context.Context, units []Unit) ([]*result.Result, error) {
	list, err := c.findGone(ctx, units)
	if err != nil {
		return nil, err
	}
	if err := c.checkGone(list); err != nil {
		out := make([]*result.Result, len(list))
		for i, g := range list {
			out[i] = c.refused(g, result.ModeDelete, err)
		}
		return out, nil
	}
	var out []*result.Result
	for _, g := range list {
		out = append(out, c.remove(ctx, g.cl, g.inv, "left the configuration"))
	}
	return out, nil
}

// planGone says, in a diff, what an apply would do to the units that left
// the configuration: one result per unit, listing the objects its
// inventory names, which the apply deletes or leaves; over the budget,
// each fails as the apply would, a warning to reviewers before it
// happens.
func (c Config) planGone(ctx context.Context, units []Unit) ([]*result.Result, error) {
	list, err := c.findGone(ctx, units)
	if err != nil {
		return nil, err
	}
	return c.diffGone(list), nil
}

// diffGone is planGone's results for list.
func (c Config) diffGone(list []gone) []*result.Result {
	budget := c.checkGone(list)
	var out []*result.Result
	for _, g := range list {
		if budget != nil {
			out = append(out, c.refused(g, result.ModeDiff, budget))
			continue
		}
		res := c.goneResult(g, result.ModeDiff)
		res.Ready, res.Reason = true, result.ReasonDiffSucceed
		st := g.inv.Status
		switch {
		case st.Suspended:
			res.Message = "left the configuration while suspended: the apply removes its inventory; its objects stay"
		case !g.deletes():
			res.Message = "left the configuration (deletionPolicy Orphan): the apply removes its inventory; its objects stay"
		default:
			res.Message = fmt.Sprintf("left the configuration (deletionPolicy %s): the apply garbage-collects it, deleting its %d object(s) (with prune's safeguards), then its inventory",
				policy(st.DeletionPolicy), len(g.inv.Entries))
			for i := range res.Entries {
				res.Entries[i].Action, res.Entries[i].Reason = result.Deleted, "its unit left the configuration: the apply garbage-collects it"
			}
		}
		res.Tally()
		out = append(out, res)
	}
	return out
}

// offlineGone says, in an offline diff against the base revision
// (c.Base.Base), what an apply may do to the units that left the
// configuration since: without cluster access no inventory can be read,
// so these are the units of the configuration there that are not in it
// now, each with the objects it renders there (nothing decrypted), as
// planGone lists them from inventories, and checked against the budget
// alike. Whether each was deployed from this configuration is not known:
// if it was not, the apply leaves it alone. path is the configuration as
// given. No base, or no configuration there, lists none.
func (c Config) offlineGone(ctx context.Context, path string) ([]*result.Result, error) {
	base, root, err := c.atBase(ctx, path)
	if err != nil || base == nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, u := range c.Set.Units {
		keep[u.Name] = true
	}
	then := Config{Set: base, Root: root, ID: c.ID, Base: c.Base, Images: c.Images, Substitute: c.Substitute, Cluster: c.Cluster,
		Identity: c.Identity, Mapped: c.Mapped}
	then.Base.Snapshot = nil // another checkout: its own files
	then.sources = then.newResolver()
	defer then.sources.Close()
	byRef := map[config.Ref]*config.Unit{}
	for _, u := range base.Units {
		byRef[u.Ref] = u
	}
	var list []gone
	sources := map[string]map[object.ID]string{}
	notes := map[string]string{}
	for _, u := range base.Units {
		if keep[u.Name] {
			continue
		}
		inv := &inventory.Inventory{Name: u.Name, Status: inventory.Status{Config: c.ID, DeletionPolicy: u.DeletionPolicy, Suspended: u.Suspend}}
		list = append(list, gone{inv: inv})
		unit, err := then.unit(ctx, u, byRef)
		if err == nil {
			err = unit.Err
		}
		var rendered *pipeline.Rendered
		if err == nil {
			rendered, err = pipeline.RenderSealed(ctx, unit.Options)
		}
		if err != nil {
			notes[u.Name] = fmt.Sprintf("its objects at %s are not listed: %v", checkout.Short(c.Base.Base), err)
			continue
		}
		sources[u.Name] = rendered.Sources
		for _, o := range rendered.Objects {
			inv.Entries = append(inv.Entries, inventory.Entry{ID: object.IDOf(o), Version: o.GetAPIVersion()})
		}
	}
	out := c.diffGone(list)
	for _, res := range out {
		if res.Reason == result.ReasonDiffSucceed {
			res.Reason = result.ReasonOfflineDiffSucceed
		}
		res.Message = fmt.Sprintf("not in the configuration since %s; if it was deployed from it: %s", checkout.Short(c.Base.Base), res.Message)
		res.Notes = append(res.Notes, "without cluster access, its inventory is not read: its objects are those it renders at "+checkout.Short(c.Base.Base))
		if n := notes[res.Unit]; n != "" {
			res.Notes = append(res.Notes, n)
		}
		for i := range res.Entries {
			res.Entries[i].Source = sources[res.Unit][res.Entries[i].Object]
		}
	}
	return out, nil
}

// goneResult is the result of unit g in mode, listing the objects its
// inventory names as skipped (left in the cluster): a caller that deletes
// or would delete them says so.
func (c Config) goneResult(g gone, mode result.Mode) *result.Result {
	res := &result.Result{Unit: g.inv.Name, Mode: mode, Revision: c.Base.Revision, StartedAt: time.Now().UTC(), Entries: []result.Entry{}}
	why := "its unit left the configuration; left in the cluster"
	if g.deletes() {
		why = "its unit left the configuration; not deleted: the garbage collection is over the budget"
	}
	for _, e := range g.inv.Entries {
		res.Entries = append(res.Entries, result.Entry{Object: e.ID, Version: e.Version, Stage: result.StagePrune, Action: result.Skipped, Reason: why})
	}
	res.AppliedRevision = g.inv.Status.LastAppliedRevision
	res.Duration = "0s"
	return res
}

// refused is the result of unit g whose collection the budget refused
// (err): nothing of it is deleted.
func (c Config) refused(g gone, mode result.Mode, err error) *result.Result {
	res := c.goneResult(g, mode)
	res.Reason, res.Message, res.Fix = result.ReasonPruneFailed, err.Error(), string(pipeline.FixForcePrune)
	res.Tally()
	return res
}

// remove removes one unit, which what says happened to (it left the
// configuration; it is deleted with it).
func (c Config) remove(ctx context.Context, cl *kube.Clients, inv *inventory.Inventory, what string) *result.Result {
	st := inv.Status
	start := time.Now()
	orphan := func(why string) *result.Result {
		res := &result.Result{Unit: inv.Name, Mode: result.ModeDelete, Revision: c.Base.Revision, StartedAt: start.UTC(), Entries: []result.Entry{}}
		if err := inventory.Delete(ctx, cl.Client, inv.Namespace, inv.Name); err != nil {
			res.Reason, res.Message = result.ReasonPruneFailed, err.Error()
			return res
		}
		res.Ready, res.Reason = true, result.ReasonDeleteSucceed
		res.Message = what + " " + why + ": its inventory is removed, its objects stay"
		res.Duration = time.Since(start).Round(time.Millisecond).String()
		return res
	}
	switch {
	case st.Suspended:
		return orphan("while suspended")
	case st.DeletionPolicy == "Orphan":
		return orphan("(deletionPolicy Orphan)")
	}
	o := c.Base
	o.Name, o.InventoryNamespace = inv.Name, inv.Namespace
	o.Clusters = c.clusterOf // a release's objects on another cluster go too
	o.WaitForTermination = st.DeletionPolicy == "WaitForTermination"
	res, _ := pipeline.Delete(ctx, cl, o)
	if res.Ready {
		res.Message = fmt.Sprintf("%s (deletionPolicy %s): %s", what, policy(st.DeletionPolicy), res.Message)
	}
	return res
}

func policy(p string) string {
	if p == "" {
		return "Delete"
	}
	return p
}

// counted records on set the builds and renderings of the run.
func (c Config) counted(set *result.Set) {
	set.Builds = c.Base.Builds.Made()
	set.Renders, set.RenderedTwice = 0, nil
	renders := c.Base.Builds.Renders()
	for _, name := range slices.Sorted(maps.Keys(renders)) {
		set.Renders += renders[name]
		if renders[name] > 1 {
			set.RenderedTwice = append(set.RenderedTwice, name)
		}
	}
}

// execute runs list, units of c, in opts.Mode. A run of the whole
// configuration (c.Only empty) then deals with the units that left it: an
// apply garbage-collects them (collectGone), a diff says what the apply
// would do to them (planGone); their results join the set. Failing to
// look for them is a warning on opts.Progress, not a failure of the run.
func (c Config) execute(ctx context.Context, list []Unit, opts runOptions) (*result.Set, error) {
	if opts.Mode == result.ModeApply && !c.Base.Recheck {
		list, c.preloaded = c.preloadInventories(ctx, list)
	}
	set, err := runUnits(ctx, list, opts)
	if set != nil {
		c.counted(set)
	}
	if err != nil || len(c.Only) > 0 || ctx.Err() != nil {
		return set, err
	}
	if opts.AbortOnError && !set.Ready {
		return set, nil // a run stopped at its first failure goes no further
	}
	var others []*result.Result
	switch opts.Mode {
	case result.ModeApply:
		others, err = c.collectGone(ctx, list)
	case result.ModeDiff:
		others, err = c.planGone(ctx, list)
	default:
		return set, nil
	}
	for _, r := range others {
		set.Units = append(set.Units, r)
		set.Ready = set.Ready && !r.Failed()
	}
	if err != nil && opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "warning: looking for units that left the configuration: %v\n", err)
	}
	return set, nil
}
