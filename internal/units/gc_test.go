package units

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// goneUnit is a unit that left the configuration, owning n ConfigMaps
// (and a Namespace, with ns).
func goneUnit(name, policy string, suspended bool, n int, ns bool) gone {
	inv := &inventory.Inventory{Name: name, Namespace: "deploy", Status: inventory.Status{Config: "clusters/prod", DeletionPolicy: policy, Suspended: suspended}}
	for i := range n {
		inv.Entries = append(inv.Entries, inventory.Entry{ID: object.ID{Kind: "ConfigMap", Namespace: name, Name: name + "-" + string(rune('a'+i))}, Version: "v1"})
	}
	if ns {
		inv.Entries = append(inv.Entries, inventory.Entry{ID: object.ID{Kind: "Namespace", Name: name}, Version: "v1"})
	}
	return gone{inv: inv}
}

// A diff of a configuration says what the apply will do to each unit
// that left it, before it happens: delete its objects, or leave them
// (Orphan, suspended); over the budget, every one fails, as the apply
// would, naming the way past it.
func TestDiffGone(t *testing.T) {
	t.Parallel()
	type want struct {
		reason  result.Reason
		counts  result.Counts
		message string
	}
	for _, tc := range []struct {
		name   string
		budget prune.Budget
		list   []gone
		want   []want
	}{
		{"nothing left", prune.Budget{MaxUnits: 1}, nil, nil},
		{"within the budget", prune.Budget{MaxUnits: 3, Max: 3, Protect: prune.DefaultProtect}, []gone{
			goneUnit("web", "", false, 2, false),
			goneUnit("db", "Orphan", false, 1, true),
			goneUnit("cache", "Delete", true, 1, false),
		}, []want{
			{result.ReasonDiffSucceed, result.Counts{Deleted: 2}, "left the configuration (deletionPolicy Delete): the apply garbage-collects it, deleting its 2 object(s)"},
			{result.ReasonDiffSucceed, result.Counts{Skipped: 2}, "left the configuration (deletionPolicy Orphan): the apply removes its inventory; its objects stay"},
			{result.ReasonDiffSucceed, result.Counts{Skipped: 1}, "left the configuration while suspended"},
		}},
		{"more units than allowed", prune.Budget{MaxUnits: 1}, []gone{
			goneUnit("web", "WaitForTermination", false, 1, false),
			goneUnit("db", "Orphan", false, 1, false),
		}, []want{
			{result.ReasonPruneFailed, result.Counts{Skipped: 1}, "refusing to garbage-collect 2 unit(s) that left the configuration (db, web): more than the 1 unit(s) allowed; none is collected"},
			{result.ReasonPruneFailed, result.Counts{Skipped: 1}, "refusing to garbage-collect 2 unit(s)"},
		}},
		{"objects together over max-prune", prune.Budget{Max: 2}, []gone{
			goneUnit("web", "", false, 2, false),
			goneUnit("api", "", false, 1, false),
		}, []want{
			{result.ReasonPruneFailed, result.Counts{Skipped: 2}, "its 3 object(s) to delete are more than the 2 allowed"},
			{result.ReasonPruneFailed, result.Counts{Skipped: 1}, "its 3 object(s) to delete are more than the 2 allowed"},
		}},
		{"a protected kind, but only where the objects are deleted", prune.Budget{Protect: prune.DefaultProtect}, []gone{
			goneUnit("web", "", false, 1, true),
			goneUnit("db", "Orphan", false, 0, true),
		}, []want{
			{result.ReasonPruneFailed, result.Counts{Skipped: 2}, "its 2 object(s) to delete are of protected kinds: Namespace/web;"},
			{result.ReasonPruneFailed, result.Counts{Skipped: 1}, "of protected kinds: Namespace/web;"},
		}},
		{"forced", prune.Budget{MaxUnits: 1, Max: 1, Protect: prune.DefaultProtect, Allow: true}, []gone{
			goneUnit("web", "", false, 2, true),
			goneUnit("db", "", false, 2, false),
		}, []want{
			{result.ReasonDiffSucceed, result.Counts{Deleted: 3}, "deleting its 3 object(s)"},
			{result.ReasonDiffSucceed, result.Counts{Deleted: 2}, "deleting its 2 object(s)"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := Config{ID: "clusters/prod", Base: pipeline.Options{Revision: "abc", PruneBudget: tc.budget}}
			got := c.diffGone(tc.list)
			if len(got) != len(tc.want) {
				t.Fatalf("%d results, want %d", len(got), len(tc.want))
			}
			for i, r := range got {
				w := tc.want[i]
				if r.Unit != tc.list[i].inv.Name || r.Mode != result.ModeDiff || r.Reason != w.reason || r.Failed() != (w.reason == result.ReasonPruneFailed) {
					t.Errorf("%s: %s %s (failed %v), want %s", r.Unit, r.Mode, r.Reason, r.Failed(), w.reason)
				}
				if diff := cmp.Diff(w.counts, r.Counts); diff != "" {
					t.Errorf("%s: counts mismatch (-want +got):\n%s", r.Unit, diff)
				}
				if !strings.Contains(r.Message, w.message) {
					t.Errorf("%s: message %q lacks %q", r.Unit, r.Message, w.message)
				}
				if fix := r.Fix == string(pipeline.FixForcePrune); fix != r.Failed() {
					t.Errorf("%s: fix %q", r.Unit, r.Fix)
				}
				if len(r.Entries) != len(tc.list[i].inv.Entries) {
					t.Errorf("%s: %d entries for %d objects", r.Unit, len(r.Entries), len(tc.list[i].inv.Entries))
				}
			}
		})
	}
}
