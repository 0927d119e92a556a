package units

import (
	"context"
	"fmt"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// collectGone garbage-collects the units that left the configuration: every
// inventory, in the inventory namespace of each cluster units runs on and
// of the default cluster, recorded as applied from c.ID, whose unit is no
// longer in the configuration. Each goes per its recorded deletion
// policy: Delete (its objects, with prune's safeguards, then its
// inventory), WaitForTermination (the same, waiting until the objects are
// gone) or Orphan (its inventory only). A unit that was suspended keeps
// its objects and loses its inventory, as Flux does. It returns one
// result per unit collected.
//
// A unit still in the configuration is never collected, whatever cluster
// its inventory is found in: two kubeconfigs may reach one cluster (as
// different users), and which cluster a kubeconfig reaches cannot be
// proved. A unit moved to another cluster leaves its inventory behind.
func (c Config) collectGone(ctx context.Context, units []Unit) ([]*result.Result, error) {
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
	var out []*result.Result
	for _, cl := range clusters {
		ns := cl.NamespaceOr(c.Base.InventoryNamespace)
		invs, err := inventory.List(ctx, cl.Client, ns)
		if err != nil {
			return out, err
		}
		for _, inv := range invs {
			if inv.Status.Config != c.ID || c.ID == "" || keep[inv.Name] {
				continue
			}
			out = append(out, c.remove(ctx, cl, inv))
		}
	}
	return out, nil
}

// remove removes one unit that left the configuration.
func (c Config) remove(ctx context.Context, cl *kube.Clients, inv *inventory.Inventory) *result.Result {
	st := inv.Status
	start := time.Now()
	orphan := func(why string) *result.Result {
		res := &result.Result{Unit: inv.Name, Mode: result.ModeDelete, Revision: c.Base.Revision, StartedAt: start.UTC(), Entries: []result.Entry{}}
		if err := inventory.Delete(ctx, cl.Client, inv.Namespace, inv.Name); err != nil {
			res.Reason, res.Message = result.ReasonPruneFailed, err.Error()
			return res
		}
		res.Ready, res.Reason = true, result.ReasonDeleteSucceed
		res.Message = "left the configuration " + why + ": its inventory is removed, its objects stay"
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
	o.WaitForTermination = st.DeletionPolicy == "WaitForTermination"
	res, _ := pipeline.Delete(ctx, cl, o)
	if res.Ready {
		res.Message = fmt.Sprintf("left the configuration (deletionPolicy %s): %s", policy(st.DeletionPolicy), res.Message)
	}
	return res
}

func policy(p string) string {
	if p == "" {
		return "Delete"
	}
	return p
}

// execute runs list, units of c, in opts.Mode; after an apply of the
// whole configuration (c.Only empty) it garbage-collects the units that
// left it (collectGone), whose results join the set. Failing to look for them
// is a warning on opts.Progress, not a failure of the run.
func (c Config) execute(ctx context.Context, list []Unit, opts runOptions) (*result.Set, error) {
	set, err := runUnits(ctx, list, opts)
	if err != nil || opts.Mode != result.ModeApply || len(c.Only) > 0 || ctx.Err() != nil {
		return set, err
	}
	collected, err := c.collectGone(ctx, list)
	for _, r := range collected {
		set.Units = append(set.Units, r)
		set.Ready = set.Ready && !r.Failed()
	}
	if err != nil && opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "warning: looking for units that left the configuration: %v\n", err)
	}
	return set, nil
}
