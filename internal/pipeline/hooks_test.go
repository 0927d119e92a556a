package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// When a release's hooks run, and what a failing hook leaves: install
// hooks for a release the unit has not recorded, upgrade hooks for one
// whose chart or values changed, none for one that did not; pre hooks
// after the definitions and before the resources, post hooks after the
// wait; a hook that fails stops what comes after it and leaves the
// release's record as it was, so the next run tries again.
func TestHookRules(t *testing.T) {
	ns := obj("v1", "Namespace", "", "apps")
	migrate := helm.Hook{Object: obj("batch/v1", "Job", "apps", "migrate"), Events: []string{helm.PreInstall, helm.PreUpgrade}}
	smoke := helm.Hook{Object: obj("v1", "Pod", "apps", "smoke"), Events: []string{helm.PostInstall, helm.PostUpgrade}}
	chart := helm.Chart{Release: helm.Reference{Kind: "HelmRelease", Namespace: "apps", Name: "web"}, ReleaseName: "web", Namespace: "apps",
		Source: "release.yaml", Hooks: []helm.Hook{migrate, smoke}, ConfigDigest: "sha256:new"}
	recorded := func(digest string) []inventory.Release {
		return []inventory.Release{{Name: "apps/web", Digest: digest}}
	}
	for _, tc := range []struct {
		name     string
		recorded []inventory.Release
		setup    func(f *fixture)
		reason   result.Reason
		calls    []string
		// releases: what the inventory records afterwards.
		releases []inventory.Release
	}{
		{name: "a release not recorded is installed",
			reason: result.ReasonApplySucceed, releases: recorded("sha256:new"),
			calls: []string{"check HelmRelease/apps/web pre-install,post-install", "apply apps", "pre-install HelmRelease/apps/web", "apply a", "wait", "post-install HelmRelease/apps/web"}},
		{name: "a release whose chart or values changed is upgraded",
			recorded: recorded("sha256:old"), reason: result.ReasonApplySucceed, releases: recorded("sha256:new"),
			calls: []string{"check HelmRelease/apps/web pre-upgrade,post-upgrade", "apply apps", "pre-upgrade HelmRelease/apps/web", "apply a", "wait", "post-upgrade HelmRelease/apps/web"}},
		{name: "a release that did not change runs no hook",
			recorded: recorded("sha256:new"), reason: result.ReasonApplySucceed, releases: recorded("sha256:new"),
			calls: []string{"apply apps,a", "wait"}},
		{name: "a hook the API server refuses: nothing written",
			setup:  func(f *fixture) { f.hooks.checkErr = errBoom },
			reason: result.ReasonValidationFailed,
			calls:  []string{"check HelmRelease/apps/web pre-install,post-install"}},
		{name: "a failing pre hook: the resources are not applied",
			recorded: recorded("sha256:old"), setup: func(f *fixture) { f.hooks.failOn = helm.PreUpgrade },
			reason: result.ReasonApplyFailed, releases: recorded("sha256:old"),
			calls: []string{"check HelmRelease/apps/web pre-upgrade,post-upgrade", "apply apps", "pre-upgrade HelmRelease/apps/web"}},
		{name: "a failing post hook fails the run",
			setup:  func(f *fixture) { f.hooks.failOn = helm.PostInstall },
			reason: result.ReasonApplyFailed,
			calls:  []string{"check HelmRelease/apps/web pre-install,post-install", "apply apps", "pre-install HelmRelease/apps/web", "apply a", "wait", "post-install HelmRelease/apps/web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := lastRun(ns, cmA)
			last.Status.Releases = tc.recorded
			f := newFixture(t, last, ns, cmA)
			f.charts = []helm.Chart{chart}
			log := &callLog{}
			f.applier.log, f.waiter.log, f.hooks.log = log, log, log
			if tc.setup != nil {
				tc.setup(f)
			}
			res, _ := f.run(result.ModeApply, DefaultOptions())
			if res.Reason != tc.reason {
				t.Fatalf("reason %s (%s), want %s", res.Reason, res.Message, tc.reason)
			}
			if diff := cmp.Diff(tc.calls, log.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.releases, f.store.current("web").Status.Releases); diff != "" {
				t.Errorf("releases recorded (-want +got):\n%s", diff)
			}
			var hookEntries int
			for _, e := range res.Entries {
				if e.Stage == result.StageHooks {
					hookEntries++
				}
			}
			if ran := len(log.calls) > 0 && tc.reason == result.ReasonApplySucceed && len(tc.calls) > 2; ran && hookEntries != 2 {
				t.Errorf("%d hook entries on the result, want 2", hookEntries)
			}
		})
	}
}

// A release depending on another of the unit is applied once the other's
// objects are ready and its post hooks ran; a dependency that does not
// become ready keeps its dependents from being applied at all.
func TestReleasesDependingOnOthersGoInWaves(t *testing.T) {
	ns := obj("v1", "Namespace", "", "apps")
	depA, depC := obj("apps/v1", "Deployment", "apps", "a"), obj("apps/v1", "Deployment", "apps", "c")
	migrate := helm.Hook{Object: obj("batch/v1", "Job", "apps", "migrate"), Events: []string{helm.PreInstall}}
	smoke := helm.Hook{Object: obj("v1", "Pod", "apps", "smoke"), Events: []string{helm.PostInstall}}
	db := helm.Chart{Release: helm.Reference{Kind: "HelmRelease", Namespace: "apps", Name: "db"}, ReleaseName: "db", Namespace: "apps",
		Objects: []object.ID{object.IDOf(depA)}, Hooks: []helm.Hook{smoke}, ConfigDigest: "sha256:db"}
	web := helm.Chart{Release: helm.Reference{Kind: "HelmRelease", Namespace: "apps", Name: "web"}, ReleaseName: "web", Namespace: "apps",
		Objects: []object.ID{object.IDOf(depC)}, Hooks: []helm.Hook{migrate}, ConfigDigest: "sha256:web", Level: 1}
	for _, tc := range []struct {
		name    string
		waitErr error
		reason  result.Reason
		calls   []string
	}{
		{name: "in order", reason: result.ReasonApplySucceed, calls: []string{
			"check HelmRelease/apps/db pre-install,post-install", "check HelmRelease/apps/web pre-install,post-install",
			"apply apps", "apply b,a", "wait", "post-install HelmRelease/apps/db", "pre-install HelmRelease/apps/web", "apply c", "wait"}},
		{name: "the dependency is not ready", waitErr: errBoom, reason: result.ReasonHealthCheckFailed, calls: []string{
			"check HelmRelease/apps/db pre-install,post-install", "check HelmRelease/apps/web pre-install,post-install",
			"apply apps", "apply b,a", "wait"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, lastRun(ns), ns, cmB, depA, depC)
			f.charts = []helm.Chart{db, web}
			log := &callLog{}
			f.applier.log, f.waiter.log, f.hooks.log = log, log, log
			f.waiter.err = tc.waitErr
			res, _ := f.run(result.ModeApply, DefaultOptions())
			if res.Reason != tc.reason {
				t.Fatalf("reason %s (%s), want %s", res.Reason, res.Message, tc.reason)
			}
			if diff := cmp.Diff(tc.calls, log.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}
