package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Recorded is an object as a run recorded it.
type Recorded struct {
	ID              object.ID
	APIVersion      string
	ResourceVersion string
}

// Unmoved returns the recorded objects that still exist, carry ownerLabels
// and have the recorded resourceVersion. It reads with one metadata-only
// LIST per kind and namespace, filtered by ownerLabels. A LIST that fails
// (say, the identity may not list a kind) only leaves its objects out; the
// failures are returned joined, for a warning.
func Unmoved(ctx context.Context, c client.Reader, recs []Recorded, ownerLabels map[string]string) (map[object.ID]string, error) {
	out := map[object.ID]string{}
	err := listRecorded(ctx, c, recs, ownerLabels, func(r Recorded, live *metav1.PartialObjectMetadata) {
		if r.ResourceVersion == live.ResourceVersion && live.DeletionTimestamp == nil {
			out[r.ID] = r.ResourceVersion
		}
	})
	return out, err
}

// Applied is an object this run applied: its recorded resourceVersion is
// the apply's, and At the time the API server stamped on our field
// manager's entry.
type Applied struct {
	Recorded
	At time.Time
	// Ready is the resourceVersion at which a wait found the object
	// ready: Settled settles it there or not at all.
	Ready string
}

// Settled returns the live resourceVersion of applied objects that moved
// since the apply only through their status subresource: controllers
// reporting on them (a Deployment's rollout, say), not anyone changing
// what we applied. Every other write, by any field manager, through the
// object or another subresource (scale), stamps a managed-fields entry
// at or after the apply, which keeps the object out; so does a missing or
// re-stamped entry of ours. Recording the settled version lets the next
// run skip an object that only reported status since.
func Settled(ctx context.Context, c client.Reader, applied []Applied, ownerLabels map[string]string) (map[object.ID]string, error) {
	byID := make(map[object.ID]Applied, len(applied))
	recs := make([]Recorded, len(applied))
	for i, a := range applied {
		recs[i], byID[a.ID] = a.Recorded, a
	}
	out := map[object.ID]string{}
	err := listRecorded(ctx, c, recs, ownerLabels, func(r Recorded, live *metav1.PartialObjectMetadata) {
		a := byID[r.ID]
		if settles(a, live) {
			out[r.ID] = live.ResourceVersion
		}
	})
	return out, err
}

// settles says whether a, as live shows it, settled: it moved since the
// apply through its status only, and is still at the version found
// ready, when a wait found it so.
func settles(a Applied, live *metav1.PartialObjectMetadata) bool {
	return live.DeletionTimestamp == nil && live.ResourceVersion != a.ResourceVersion &&
		(a.Ready == "" || live.ResourceVersion == a.Ready) && onlyStatusSince(live.ManagedFields, a.At)
}

func onlyStatusSince(entries []metav1.ManagedFieldsEntry, applied time.Time) bool {
	if applied.IsZero() {
		return false
	}
	ours := false
	for _, e := range entries {
		switch {
		case e.Time == nil:
			return false
		case e.Manager == FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "":
			if !e.Time.Time.Equal(applied) {
				return false
			}
			ours = true
		case e.Subresource == "status":
		case !e.Time.Time.Before(applied):
			return false
		}
	}
	return ours
}

// listRecorded LISTs the metadata of recs' kinds, one request per kind and
// namespace filtered by ownerLabels, and calls fn for each recorded
// object found. Failed LISTs are returned joined; their objects are not
// reported.
func listRecorded(ctx context.Context, c client.Reader, recs []Recorded, ownerLabels map[string]string, fn func(Recorded, *metav1.PartialObjectMetadata)) error {
	type group struct {
		gvk       schema.GroupVersionKind
		namespace string
	}
	want := map[group]map[string]Recorded{}
	for _, r := range recs {
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err != nil || r.ResourceVersion == "" {
			continue
		}
		g := group{gv.WithKind(r.ID.Kind), r.ID.Namespace}
		if want[g] == nil {
			want[g] = map[string]Recorded{}
		}
		want[g][r.ID.Name] = r
	}
	var (
		mu   sync.Mutex
		errs []error
		eg   errgroup.Group
	)
	eg.SetLimit(concurrency)
	for g, names := range want {
		eg.Go(func() error {
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
				return nil
			}
			for i := range list.Items {
				if r, ok := names[list.Items[i].Name]; ok && list.Items[i].Namespace == g.namespace {
					fn(r, &list.Items[i])
				}
			}
			return nil
		})
	}
	_ = eg.Wait()
	return errors.Join(errs...)
}
