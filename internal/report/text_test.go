package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sample(ready bool) *result.Result {
	r := &result.Result{Unit: "web", Mode: "apply", Revision: "abc123", Ready: ready, Validation: result.ValidationServer, Duration: "1.5s", Entries: []result.Entry{
		{Object: object.ID{Kind: "Namespace", Name: "shop"}, Stage: result.StageDefinitions, Action: result.Created, Source: "ns.yaml"},
		{Object: object.ID{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, Stage: result.StageResources, Action: result.Configured, Source: "apps/web.yaml",
			Diff: "--- Deployment/shop/web (live)\n+++ Deployment/shop/web (desired)\n@@ -1 +1 @@\n-  replicas: 2\n+  replicas: 3\n"},
		{Object: object.ID{Kind: "Service", Namespace: "shop", Name: "web"}, Stage: result.StageResources, Action: result.Unchanged, Source: "apps/web.yaml"},
		{Object: object.ID{Kind: "Namespace", Name: "old"}, Stage: result.StagePrune, Action: result.Skipped, Reason: "namespace still holds 1 object(s) this unit does not own (ConfigMap/old/x); not deleted"},
	}}
	if ready {
		r.Reason, r.Message = "ApplySucceed", "applied revision abc123"
	} else {
		r.Reason, r.Message = "HealthCheckFailed", "timeout after 5m0s waiting for 1 object(s) to become ready:\n  - Deployment/shop/web: InProgress\n"+
			"      Warning BackOff (x4) on Pod/web-7d-x2: Back-off restarting failed container\n"+
			"      Pod/web-7d-x2 container web: waiting CrashLoopBackOff; last instance terminated: Error, exit code 1; 4 restarts"
		code := int32(1)
		r.Diagnostics = []result.Diagnostic{{
			Object:     object.ID{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"},
			Events:     []result.Event{{Type: "Warning", Reason: "BackOff", Message: "Back-off restarting failed container", Count: 4, Objects: []string{"Pod/web-7d-x2"}}},
			Containers: []result.ContainerState{{Pod: "web-7d-x2", Container: "web", State: "waiting", Reason: "CrashLoopBackOff", LastReason: "Error", LastExitCode: &code, Restarts: 4}},
			Logs:       []result.LogTail{{Pod: "web-7d-x2", Container: "web", Previous: true, Lines: []string{"listening on :8080", "panic: <nil> config `db`"}}},
		}}
		r.Remediations = []result.Remediation{
			{HelmRelease: "HelmRelease/shop/web", Action: "upgrade", Attempt: 1, Retried: true, Strategy: "rollback", Revision: "0123456789abcdef", Chart: "web 1.0.0", Applied: 3, Deleted: 1},
			{HelmRelease: "HelmRelease/shop/web", Action: "upgrade", Attempt: 2, Strategy: "uninstall", Deleted: 3, Error: "deleting Service/shop/web: forbidden"},
		}
	}
	r.Tally()
	return r
}

func TestText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		r     *result.Result
		diffs bool
	}{
		{"apply-succeeded", sample(true), false},
		{"apply-failed", sample(false), false},
		{"diff-with-diffs", sample(true), true},
		{"apply-default-namespace", withNamespace(sample(true), "shop"), false},
		{"apply-rollback", rolledBack(sample(true)), false},
		{"apply-failed-one-cause", missingNamespace(50), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			Text(&buf, tc.r, tc.diffs)
			golden(t, filepath.Join("testdata", tc.name+".golden"), buf.Bytes())
		})
	}
}

// missingNamespace is an apply whose n objects in namespace argocd failed
// because it does not exist, and one more for a cause of its own, as the
// engine reports it: one message line per cause.
func missingNamespace(n int) *result.Result {
	const cause = "namespace argocd not found, and this unit does not create it"
	r := &result.Result{Unit: "argocd", Mode: "apply", Revision: "abc123", Validation: result.ValidationServer, Duration: "1.2s",
		Reason: "ValidationFailed", Message: cause + " — " + fmt.Sprint(n) + " objects, e.g. ConfigMap/argocd/cm-00 (install.yaml), ConfigMap/argocd/cm-01 (install.yaml), ConfigMap/argocd/cm-02 (install.yaml) and " + fmt.Sprint(n-3) + " more\n" +
			"Job/default/hook (hook.yaml): jobs.batch \"hook\" is forbidden: exceeded quota: few"}
	for i := range n {
		r.Entries = append(r.Entries, result.Entry{Object: object.ID{Kind: "ConfigMap", Namespace: "argocd", Name: fmt.Sprintf("cm-%02d", i)},
			Stage: result.StageResources, Action: result.Failed, Source: "install.yaml", Reason: cause})
		if i == 1 {
			r.Entries = append(r.Entries, result.Entry{Object: object.ID{Group: "batch", Kind: "Job", Namespace: "default", Name: "hook"},
				Stage: result.StageResources, Action: result.Failed, Source: "hook.yaml", Reason: `jobs.batch "hook" is forbidden: exceeded quota: few`})
		}
	}
	r.Tally()
	return r
}

// withNamespace is r after objects without a namespace went to ns.
func withNamespace(r *result.Result, ns string) *result.Result {
	r.Namespace = ns
	return r
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from %s (-update rewrites it):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// rolledBack is r as a rollback to revision 3 of the unit's history.
func rolledBack(r *result.Result) *result.Result {
	r.RollbackOf, r.HistoryRevision = 3, 7
	return r
}
