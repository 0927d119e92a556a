package report

import (
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A test's table: a row per Kustomization and HelmRelease, PASS, FAIL or
// SKIP, the dangers after it, and how many passed; names and messages
// taken from the repository are escaped.
func TestTestTable(t *testing.T) {
	set := &result.Set{Units: []*result.Result{
		{Unit: "web", Ready: true, Reason: result.ReasonOfflineDiffSucceed, Entries: []result.Entry{
			{Object: object.ID{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding", Name: "web-admin"}, Action: result.Created,
				Dangers: []result.Danger{{Risk: "RBAC grant", Field: "roleRef", Consequence: "binds cluster-admin"}}},
			{Object: object.ID{Kind: "ConfigMap", Namespace: "web", Name: "a"}, Action: result.Created},
		}, Releases: []result.Release{{HelmRelease: "HelmRelease/web/podinfo", Chart: "podinfo", Version: "6.8.0", Objects: []object.ID{{Kind: "Service", Namespace: "web", Name: "podinfo"}}}}},
		{Unit: "broken", Reason: result.ReasonBuildFailed, Message: "kustomization of deploy/broken: missing.yaml | @team\nmore"},
		{Unit: "paused", Ready: true, Reason: result.ReasonSuspended},
	}}
	got := TestTable(set)
	for _, want := range []string{
		"| ✅ PASS | `web` | OfflineDiffSucceed | 2 objects |",
		"| ✅ PASS | ↳ `HelmRelease/web/podinfo` | | chart podinfo 6.8.0, 1 objects |",
		"| ❌ FAIL | `broken` | BuildFailed | kustomization of deploy/broken: missing.yaml \\| @\u200bteam |",
		"| ⏭️ SKIP | `paused` |",
		"- ⚠️ unit `web`: `ClusterRoleBinding/web-admin` `roleRef` binds cluster-admin",
		"**1 of 3 unit(s) passed.**",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "more") {
		t.Errorf("a message's second line is in the table:\n%s", got)
	}
}
