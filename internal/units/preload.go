package units

import (
	"context"
	"slices"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// preloadInventories reads, with one LIST per cluster, the inventories of
// the units of list an apply runs there, and returns list (a copy) with
// each unit's Options.Preloaded answering from it: a configuration's
// no-op is mostly units that only read their inventory and their
// objects, and one LIST saves a GET per unit. A unit that writes reads
// its inventory again under its lock; a LIST that fails preloads
// nothing (each unit reads its own, as without this). It also returns
// the inventories listed, by cluster, for findGone.
func (c Config) preloadInventories(ctx context.Context, list []Unit) ([]Unit, map[*kube.Clients][]*inventory.Inventory) {
	perCluster := map[*kube.Clients]int{}
	for _, u := range list {
		if u.Cluster != nil && (u.Err == nil || u.resolve != nil) {
			perCluster[u.Cluster]++
		}
	}
	type preload struct {
		namespace string
		byName    map[string]*inventory.Inventory
	}
	loaded := map[*kube.Clients]*preload{}
	listed := map[*kube.Clients][]*inventory.Inventory{}
	for cl, n := range perCluster {
		if n < 2 {
			continue // a GET is as cheap
		}
		ns := cl.NamespaceOr(c.Base.InventoryNamespace)
		invs, err := inventory.List(ctx, cl.Client, ns)
		if err != nil {
			continue
		}
		p := &preload{namespace: ns, byName: make(map[string]*inventory.Inventory, len(invs))}
		for _, inv := range invs {
			p.byName[inv.Name] = inv
		}
		loaded[cl], listed[cl] = p, invs
	}
	if len(loaded) == 0 {
		return list, nil
	}
	out := slices.Clone(list)
	for i, u := range out {
		p := loaded[u.Cluster]
		if p == nil {
			continue
		}
		inv := p.byName[u.Options.Name]
		out[i].Options.Preloaded = func(namespace, name string) (*inventory.Inventory, bool) {
			if namespace != p.namespace || name != u.Options.Name {
				return nil, false
			}
			return inv, true
		}
	}
	return out, listed
}
