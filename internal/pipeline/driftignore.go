package pipeline

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// keepIgnoredDrift honours the releases' spec.driftDetection.ignore, as
// helm-controller does: for a release this run does not install or
// upgrade (its chart and values are the ones recorded), each object its
// rules select gets the live values at the ignored paths before it is
// dry-run and applied, so what changed there in the cluster (replicas an
// autoscaler set, a field a webhook fills) is neither shown as drift nor
// reverted. A release that is installed or upgraded is applied as
// rendered.
func (r *run) keepIgnoredDrift(ctx context.Context, d *desired) error {
	if r.cl.charts == nil || r.last == nil {
		return nil
	}
	recorded := recordedDigests(r.last)
	for _, c := range d.Charts {
		if len(c.DriftIgnore) == 0 || recorded[c.Key()] != c.ConfigDigest {
			continue
		}
		ids := map[object.ID]bool{}
		for _, id := range c.Objects {
			ids[id] = true
		}
		for _, u := range d.Objects {
			id := object.IDOf(u)
			if !ids[id] || !helm.Selects(c.DriftIgnore, u) {
				continue
			}
			live, err := r.cl.charts.LookupObject(ctx, u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
			if err != nil {
				return failure(result.ReasonBuildFailed, fmt.Errorf("%s: reading it for %s's spec.driftDetection.ignore: %w", id, c.Release, err))
			}
			if len(live) == 0 {
				continue // not there: created as rendered
			}
			if kept := helm.KeepIgnoredDrift(u, &unstructured.Unstructured{Object: live}, c.DriftIgnore); len(kept) > 0 {
				r.progress("%s: %s kept as the cluster has it (%s's spec.driftDetection.ignore)", id, strings.Join(kept, ", "), c.Release)
			}
		}
	}
	return nil
}
