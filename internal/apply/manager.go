// Package apply server-side applies a unit's objects in stages with
// fluxcd/pkg/ssa, and computes what an apply would change (diff).
package apply

import (
	"maps"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// OwnerLabels are the labels naming the unit that owns an object, as
// ssa.ResourceManager's GetOwnerLabels makes them:
// kustomize-deploy.dev/name and kustomize-deploy.dev/namespace (the
// inventory's namespace). Prune deletes nothing that lacks them.
func OwnerLabels(unit, namespace string) map[string]string {
	return map[string]string{OwnerGroup + "/name": unit, OwnerGroup + "/namespace": namespace}
}

// SetOwnerLabels adds labels to every object.
func SetOwnerLabels(objs []*unstructured.Unstructured, labels map[string]string) {
	for _, u := range objs {
		l := u.GetLabels()
		if l == nil {
			l = make(map[string]string, len(labels))
		}
		maps.Copy(l, labels)
		u.SetLabels(l)
	}
}
