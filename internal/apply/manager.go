// Package apply server-side applies a unit's objects in stages with
// fluxcd/pkg/ssa, and computes what an apply would change (diff).
package apply

import (
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// FieldManager is the server-side apply field manager of every write.
const FieldManager = "kustomize-deploy"

// OwnerGroup prefixes the labels naming the unit that owns an object:
// kustomize-deploy.dev/name and kustomize-deploy.dev/namespace.
const OwnerGroup = "kustomize-deploy.dev"

// NewManager returns an ssa resource manager acting through c.
func NewManager(c *kube.Clients) *ssa.ResourceManager {
	poller := polling.NewStatusPoller(c.Client, c.Mapper, polling.Options{})
	m := ssa.NewResourceManager(c.Client, poller, ssa.Owner{Field: FieldManager, Group: OwnerGroup})
	m.SetConcurrency(8)
	return m
}
