package prune

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// skippedResources are never counted as foreign: the cluster creates and
// removes them on its own.
var skippedResources = map[string]bool{
	"events":                          true,
	"events.events.k8s.io":            true,
	"endpoints":                       true,
	"endpointslices.discovery.k8s.io": true,
	"leases.coordination.k8s.io":      true,
}

// autoCreated are objects the control plane puts in every namespace.
var autoCreated = map[string]bool{
	"ServiceAccount/default":     true,
	"ConfigMap/kube-root-ca.crt": true,
}

// foreignObjects lists the objects in namespace that neither carry the
// unit's owner labels nor are owned (ownerReferences) by another object, nor
// are created by the control plane itself: objects deleting the namespace
// would take with it although the unit never owned them.
func foreignObjects(ctx context.Context, c *kube.Clients, namespace string, owner map[string]string) ([]string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil && !onlyVanished(err) {
		// Even a partial answer is not enough: what the silent API groups
		// hold cannot be checked.
		return nil, fmt.Errorf("discovering namespaced resources: %w", err)
	}
	mc, err := metadata.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	var foreign []string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			full := r.Name
			if gv.Group != "" {
				full += "." + gv.Group
			}
			if skippedResources[full] || strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") {
				continue
			}
			items, err := mc.Resource(gv.WithResource(r.Name)).Namespace(namespace).List(ctx, metav1.ListOptions{})
			switch {
			case apierrors.IsNotFound(err):
				continue // the kind is gone (its CRD was just deleted): it holds nothing
			case err != nil:
				return nil, fmt.Errorf("listing %s in %s: %w", full, namespace, err)
			}
			for _, it := range items.Items {
				id := r.Kind + "/" + it.Name
				if autoCreated[id] || len(it.OwnerReferences) > 0 || owned(it.Labels, owner) {
					continue
				}
				foreign = append(foreign, r.Kind+"/"+namespace+"/"+it.Name)
			}
		}
	}
	sort.Strings(foreign)
	return foreign, nil
}

func owned(labels, owner map[string]string) bool {
	for k, v := range owner {
		if labels[k] != v {
			return false
		}
	}
	return len(owner) > 0
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

// onlyVanished reports whether a discovery error only says that API
// groups are gone (their CRDs deleted a moment ago, discovery not caught
// up): such groups hold no objects.
func onlyVanished(err error) bool {
	var failed *discovery.ErrGroupDiscoveryFailed
	if !errors.As(err, &failed) || len(failed.Groups) == 0 {
		return false
	}
	for _, gerr := range failed.Groups {
		if !apierrors.IsNotFound(gerr) {
			return false
		}
	}
	return true
}
