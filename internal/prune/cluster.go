package prune

import (
	"context"

	"github.com/fluxcd/pkg/ssa"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// NewCluster prunes through c (the identity that applies) with ssa's
// manager m, whose deletes check owner and the prune: disabled annotation
// once more against the live object.
func NewCluster(c *kube.Clients, m *ssa.ResourceManager, owner map[string]string) Cluster {
	return &cluster{c: c, m: m, owner: owner}
}

type cluster struct {
	c     *kube.Clients
	m     *ssa.ResourceManager
	owner map[string]string
}

// Get reads the object of e at the version the inventory recorded, else
// at one the cluster serves now (a CRD may have dropped that version); an
// object of a kind the cluster serves at no version is a
// *kube.NotServedError: it cannot exist.
func (k *cluster) Get(ctx context.Context, e inventory.Entry) (*unstructured.Unstructured, error) {
	gvk := schema.FromAPIVersionAndKind(e.Version, e.Kind)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	err := k.c.Client.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Name}, live)
	switch {
	case err == nil:
		return live, nil
	case !kube.NotServed(err):
		return nil, err
	}
	served, serr := kube.Serves(k.c.Mapper, gvk.GroupKind())
	switch {
	case serr != nil:
		return nil, err
	case len(served.Versions) == 0:
		return nil, &kube.NotServedError{GroupVersionKind: gvk}
	}
	live = &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk.GroupKind().WithVersion(served.Preferred))
	if err := k.c.Client.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Name}, live); err != nil {
		return nil, err
	}
	return live, nil
}

func (k *cluster) Delete(ctx context.Context, live *unstructured.Unstructured) (result.Action, error) {
	cse, err := k.m.Delete(ctx, live, ssa.DeleteOptions{
		PropagationPolicy: metav1.DeletePropagationBackground,
		Inclusions:        k.owner,
		Exclusions:        object.Selector(object.PruneKey, object.Disabled),
	})
	if err != nil {
		return result.Failed, err
	}
	return result.Action(cse.Action), nil
}

func (k *cluster) Foreign(ctx context.Context, namespace string, owner map[string]string) ([]string, error) {
	return foreignObjects(ctx, k.c, namespace, owner)
}
