package pipeline

import (
	"context"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// Suspend records on unit opts.Name's inventory that every run skips it
// (suspended) or runs it again; a run under way is not stopped, as in Flux.
func Suspend(ctx context.Context, c *kube.Clients, opts Options, suspended bool) (*inventory.Inventory, error) {
	return inventory.Update(ctx, c.Client, c.NamespaceOr(opts.InventoryNamespace), opts.Name, func(inv *inventory.Inventory) {
		inv.Status.Suspended = suspended
	})
}

// Pin records on unit opts.Name's inventory that runs for any revision
// but revision skip it; an empty revision unpins it.
func Pin(ctx context.Context, c *kube.Clients, opts Options, revision string) (*inventory.Inventory, error) {
	return inventory.Update(ctx, c.Client, c.NamespaceOr(opts.InventoryNamespace), opts.Name, func(inv *inventory.Inventory) {
		inv.Status.Pinned = revision
	})
}
