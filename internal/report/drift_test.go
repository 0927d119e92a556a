package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

var driftOptions = DriftOptions{
	Title:  "Drift: web (prod)",
	Marker: "<!-- kustomize-deploy:drift unit=web cluster=prod -->",
	RunURL: "https://github.com/o/r/actions/runs/42", Cluster: "prod",
}

// drifted is a drift check of web that found a Deployment scaled by hand
// and a ConfigMap deleted; as applied when corrected, else as diffed.
func drifted(corrected bool) *result.Result {
	r := &result.Result{Unit: "web", Mode: result.ModeDrift, Revision: "abc123", AppliedRevision: "abc123", Ready: true, Drifted: true,
		StartedAt: time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC), Duration: "1.2s", Validation: result.ValidationServer,
		Reason: result.ReasonDiffSucceed, Message: "drift: 1 to create, 1 to configure, 0 to delete (reported, not corrected)",
		Entries: []result.Entry{
			{Object: object.ID{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, Stage: result.StageResources, Action: result.Configured, Source: "apps/web.yaml",
				Diff: "--- Deployment/shop/web (live)\n+++ Deployment/shop/web (desired)\n@@ -1 +1 @@\n-  replicas: 9\n+  replicas: 3\n"},
			{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "web-settings"}, Stage: result.StageResources, Action: result.Created, Source: "apps/settings.yaml"},
			{Object: object.ID{Kind: "Service", Namespace: "shop", Name: "web"}, Stage: result.StageResources, Action: result.Unchanged, Source: "apps/web.yaml"},
		}}
	if corrected {
		r.Reason, r.Message = result.ReasonApplySucceed, "drift: 1 to create, 1 to configure, 0 to delete: corrected, applied revision abc123"
	}
	r.Tally()
	return r
}

func TestDriftIssue(t *testing.T) {
	t.Parallel()
	failed := drifted(true)
	failed.Ready, failed.Reason, failed.Message = false, result.ReasonApplyFailed, "Deployment/shop/web apply failed: admission webhook denied the request"
	for _, tc := range []struct {
		name      string
		res       *result.Result
		corrected bool
	}{
		{"drift-reported", drifted(false), false},
		{"drift-corrected", drifted(true), true},
		{"drift-correction-failed", failed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := driftOptions
			opts.Corrected = tc.corrected
			golden(t, filepath.Join("testdata", tc.name+".golden"), []byte(DriftIssue(tc.res, opts)))
		})
	}
}

// An issue body stays under GitHub's limit however large the diffs: they
// give way to notes, the header stays.
func TestDriftIssueFitsGitHub(t *testing.T) {
	t.Parallel()
	r := bigDiffs(40, 42, 41)
	r.Mode, r.Drifted = result.ModeDrift, true
	opts := driftOptions
	opts.MaxBytes = 65000

	body := DriftIssue(r, opts)

	if n := utf8.RuneCountInString(body); len(body) > opts.MaxBytes || n > commentLimit {
		t.Fatalf("body is %d bytes, %d characters", len(body), n)
	}
	for _, want := range []string{driftOptions.Marker, "## Drift: web (prod)", "**The cluster differs from Git:** 3 objects (3 to configure)", "| cluster | `prod` |", "not shown here (too large)"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q", want)
		}
	}
}

func TestDriftResolved(t *testing.T) {
	t.Parallel()
	r := &result.Result{Unit: "web", Mode: result.ModeDrift, Revision: "abc123", Ready: true, StartedAt: time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)}
	got := DriftResolved(r, "https://github.com/o/r/actions/runs/43")
	want := "**The cluster matches Git again** at `abc123`. Checked 2026-11-23T02:00:00Z by [this workflow run](https://github.com/o/r/actions/runs/43)," +
		" which found no drift and changed nothing: the drift was corrected before (by an earlier drift run, a deploy or by hand). Closing; new drift opens a new issue.\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
