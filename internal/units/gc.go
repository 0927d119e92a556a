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

// Collect garbage-collects the units that left the configuration: every
// inventory, in the inventory namespace of each cluster units runs on and
// of the default cluster, recorded as applied from c.ID, whose unit is no
// longer among units. Each goes per its recorded deletion policy: Delete
// (its objects, with prune's safeguards, then its inventory),
// WaitForTermination (the same, waiting until the objects are gone) or
// Orphan (its inventory only). A unit that was suspended keeps its
// objects and loses its inventory, as Flux does. It returns one result per
// unit collected.
func (c Config) Collect(ctx context.Context, units []Unit) ([]*result.Result, error) {
	def, defName, err := c.Cluster(nil)
	if err != nil {
		return nil, err
	}
	type cluster struct {
		clients *kube.Clients
		name    string
		keep    map[string]bool
	}
	clusters := map[*kube.Clients]*cluster{def: {clients: def, name: defName, keep: map[string]bool{}}}
	order := []*cluster{clusters[def]}
	for _, u := range units {
		cl := clusters[u.Cluster]
		if cl == nil {
			cl = &cluster{clients: u.Cluster, name: u.ClusterName, keep: map[string]bool{}}
			clusters[u.Cluster] = cl
			order = append(order, cl)
		}
		cl.keep[u.Options.Name] = true
	}
	var out []*result.Result
	for _, cl := range order {
		ns := c.Base.InventoryNamespace
		if ns == "" {
			ns = cl.clients.Namespace
		}
		invs, err := inventory.List(ctx, cl.clients.Client, ns)
		if err != nil {
			return out, err
		}
		for _, inv := range invs {
			if inv.Status.Config != c.ID || c.ID == "" || cl.keep[inv.Name] {
				continue
			}
			out = append(out, c.collect(ctx, cl.clients, inv))
		}
	}
	return out, nil
}

// collect removes one unit that left the configuration.
func (c Config) collect(ctx context.Context, cl *kube.Clients, inv *inventory.Inventory) *result.Result {
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
