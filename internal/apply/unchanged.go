package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Seen is what a run recorded about an object it left as desired: the
// digest of the manifest and the live object's resourceVersion then.
type Seen struct {
	Digest          string
	ResourceVersion string
}

// Untouched returns the objects of objs that need no dry-run: their
// manifest has the digest seen records, and the live object still has the
// resourceVersion recorded then, so neither Git nor anyone with access to
// the cluster has changed them since. Every edit, even of status or
// metadata, changes a resourceVersion, so an object someone edited, deleted
// or stripped of its owner labels is never among them.
//
// It reads with one metadata-only LIST per kind and namespace, filtered by
// ownerLabels. A LIST that fails (say, the identity may not list a kind)
// only leaves its objects to the dry-run; the failures are returned as a
// warning, not an error.
func Untouched(ctx context.Context, c client.Reader, objs []*unstructured.Unstructured, seen map[object.ID]Seen, ownerLabels map[string]string) (map[object.ID]string, error) {
	type group struct {
		gvk       schema.GroupVersionKind
		namespace string
	}
	want := map[group]map[string]string{} // name → recorded resourceVersion
	for _, u := range objs {
		s, ok := seen[object.IDOf(u)]
		if !ok || s.ResourceVersion == "" || s.Digest == "" || s.Digest != object.Digest(u) {
			continue
		}
		g := group{u.GroupVersionKind(), u.GetNamespace()}
		if want[g] == nil {
			want[g] = map[string]string{}
		}
		want[g][u.GetName()] = s.ResourceVersion
	}

	out := map[object.ID]string{}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, concurrency)
	for g, names := range want {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(g.gvk.GroupVersion().WithKind(g.gvk.Kind + "List"))
			err := c.List(ctx, list, client.InNamespace(g.namespace), client.MatchingLabels(ownerLabels))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				where := g.gvk.Kind
				if g.namespace != "" {
					where += " in " + g.namespace
				}
				errs = append(errs, fmt.Errorf("listing %s: %w", where, err))
				return
			}
			for _, item := range list.Items {
				if rv, ok := names[item.Name]; ok && rv == item.ResourceVersion && item.DeletionTimestamp == nil {
					id := object.ID{Group: g.gvk.Group, Kind: g.gvk.Kind, Namespace: item.Namespace, Name: item.Name}
					out[id] = rv
				}
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
