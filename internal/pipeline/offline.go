package pipeline

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// CompareRendered diffs two renderings of a unit without a cluster, e.g. a
// pull request's base and head commits when the workflow has no cluster
// access: objects only in head are created, only in base deleted (what
// prune would do), in both configured or unchanged. Secret values are
// masked in the diffs. Entries follow head's order, then base's leftovers.
func CompareRendered(base, head *Rendered) []result.Entry {
	before := map[object.ID]*unstructured.Unstructured{}
	if base != nil {
		for _, u := range base.Objects {
			before[object.IDOf(u)] = u
		}
	}
	seen := map[object.ID]bool{}
	var entries []result.Entry
	for _, u := range head.Objects {
		id := object.IDOf(u)
		seen[id] = true
		e := result.Entry{Object: id, Version: u.GetAPIVersion(), Source: head.Sources[id], Stage: result.StageOf(u)}
		old, ok := before[id]
		switch {
		case !ok:
			e.Action, e.Diff = result.Created, apply.UnifiedDiff(id, nil, u)
		case reflect.DeepEqual(old.Object, u.Object):
			e.Action = result.Unchanged
		default:
			e.Action, e.Diff = result.Configured, apply.UnifiedDiff(id, old, u)
		}
		entries = append(entries, e)
	}
	if base != nil {
		for _, u := range base.Objects {
			id := object.IDOf(u)
			if !seen[id] {
				entries = append(entries, result.Entry{Object: id, Version: u.GetAPIVersion(), Source: base.Sources[id], Stage: result.StagePrune, Action: result.Deleted})
			}
		}
	}
	return entries
}
