package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// The records of a Helm release are removed only when asked to, only for
// the releases whose objects the run took over, and only once the unit
// applied and became ready: a run that fails leaves the old release whole.
func TestRemoveHelmRecordsOnlyAfterSuccess(t *testing.T) {
	a, b := configMap("a"), configMap("b")
	for _, tc := range []struct {
		name    string
		setup   func(f *fixture, o *Options)
		reason  result.Reason
		removed []string
	}{
		{name: "taken over and ready: removed", reason: result.ReasonApplySucceed, removed: []string{"apps/old-web"}},
		{name: "not asked to: kept",
			setup:  func(_ *fixture, o *Options) { o.RemoveHelmRecords = false },
			reason: result.ReasonApplySucceed},
		{name: "nothing taken over: none removed",
			setup:  func(f *fixture, _ *Options) { f.applier.reasons = nil },
			reason: result.ReasonApplySucceed},
		{name: "the apply fails: kept",
			setup:  func(f *fixture, _ *Options) { f.applier.executeErr = errBoom },
			reason: result.ReasonApplyFailed},
		{name: "the health check fails: kept",
			setup:  func(f *fixture, o *Options) { f.waiter.err, o.HealthChecks = errBoom, []object.ID{object.IDOf(a)} },
			reason: result.ReasonHealthCheckFailed},
		{name: "removing fails: the unit fails, naming the release",
			setup:  func(f *fixture, _ *Options) { f.records.err = errBoom },
			reason: result.ReasonApplyFailed, removed: []string{"apps/old-web"}},
		{name: "a diff removes nothing",
			reason: result.ReasonDiffSucceed},
		{name: "a HelmRelease of that release keeps its records in its storageNamespace: removed there too",
			setup: func(f *fixture, _ *Options) {
				f.charts = []helm.Chart{{Release: helm.Reference{Kind: "HelmRelease", Namespace: "flux-system", Name: "web"}, ReleaseName: "old-web", Namespace: "apps", StorageNamespace: "flux-system"}}
			},
			reason: result.ReasonApplySucceed, removed: []string{"apps/old-web", "flux-system/old-web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil, a, b)
			f.applier.reasons = map[object.ID]string{object.IDOf(a): "taken over from Helm release apps/old-web", object.IDOf(b): "taken over from Helm release apps/old-web"}
			opts := DefaultOptions()
			opts.RemoveHelmRecords = true
			if tc.setup != nil {
				tc.setup(f, &opts)
			}
			mode := result.ModeApply
			if tc.reason == result.ReasonDiffSucceed {
				mode = result.ModeDiff
			}
			res, _ := f.run(mode, opts)
			if res.Reason != tc.reason {
				t.Fatalf("reason %s (%s), want %s", res.Reason, res.Message, tc.reason)
			}
			if !slices.Equal(f.records.removed, tc.removed) {
				t.Errorf("removed the records of %q, want %q", f.records.removed, tc.removed)
			}
			if tc.name == "removing fails: the unit fails, naming the release" && !strings.Contains(res.Message, "removing the records of Helm release apps/old-web") {
				t.Errorf("message %q", res.Message)
			}
		})
	}
}
