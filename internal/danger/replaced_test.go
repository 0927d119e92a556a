package danger

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func nsEntry(name string, action result.Action) result.Entry {
	return result.Entry{Object: object.ID{Kind: "Namespace", Name: name}, Action: action}
}

// A created Namespace is risky only when the change deletes another
// Namespace: in the same unit (renamed, the old one pruned) or in another
// unit of the configuration (moved).
func TestMarkReplacedNamespaces(t *testing.T) {
	cm := result.Entry{Object: object.ID{Kind: "ConfigMap", Namespace: "old", Name: "a"}, Action: result.Deleted}
	for _, tc := range []struct {
		name    string
		results [][]result.Entry
		// want are the consequences of the Namespaces marked, by name.
		want map[string]string
	}{
		{"a Namespace created alone", [][]result.Entry{{nsEntry("shop", result.Created)}}, map[string]string{}},
		{"a Namespace created, objects deleted", [][]result.Entry{{nsEntry("shop", result.Created), cm}}, map[string]string{}},
		{"a Namespace configured beside a deletion", [][]result.Entry{{nsEntry("shop", result.Configured), nsEntry("old", result.Deleted)}}, map[string]string{}},
		{"renamed in one unit", [][]result.Entry{{nsEntry("shop", result.Created), nsEntry("old", result.Deleted)}},
			map[string]string{"shop": "created while the same change deletes Namespace 'old': a Namespace is not renamed, its objects are deleted with it, not moved"}},
		{"moved to another unit", [][]result.Entry{{nsEntry("old", result.Deleted)}, {nsEntry("shop", result.Created)}},
			map[string]string{"shop": "created while the same change deletes Namespace 'old': a Namespace is not renamed, its objects are deleted with it, not moved"}},
		{"many deleted", [][]result.Entry{{nsEntry("new", result.Created), nsEntry("d", result.Deleted), nsEntry("a", result.Deleted), nsEntry("c", result.Deleted), nsEntry("b", result.Deleted), nsEntry("a", result.Deleted)}},
			map[string]string{"new": "created while the same change deletes Namespaces 'a', 'b', 'c' and more: a Namespace is not renamed, their objects are deleted with it, not moved"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var results []*result.Result
			for _, entries := range tc.results {
				results = append(results, &result.Result{Entries: entries})
			}
			marked := MarkReplacedNamespaces(results...)
			if again := MarkReplacedNamespaces(results...); again != 0 {
				t.Errorf("marked %d again", again)
			}
			got := map[string]string{}
			for _, r := range results {
				for _, e := range r.Entries {
					for _, d := range e.Dangers {
						if d.Risk != RiskNamespaceReplaced || d.Field != "metadata.name" {
							t.Errorf("%s: danger %+v", e.Object, d)
						}
						got[e.Object.Name] = d.Consequence
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || marked != len(tc.want) {
				t.Errorf("marked %d (-want +got):\n%s", marked, diff)
			}
		})
	}
}
