package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

const testRevision = "main@sha1:0123456789abcdef0123456789abcdef01234567"

var (
	web     = object.ID{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "web"}
	webSvc  = object.ID{Kind: "Service", Namespace: "apps", Name: "web"}
	podinfo = object.ID{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "podinfo"}
	apps    = Source{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Namespace: "flux-system", Name: "apps",
		Labels: map[string]string{"team": "web"}, Annotations: map[string]string{"event.toolkit.fluxcd.io/env": "prod", "other": "x"}}
)

// resultOf is a run's result with entries, tallied.
func resultOf(mode result.Mode, reason result.Reason, ready bool, message string, entries ...result.Entry) *result.Result {
	r := &result.Result{Unit: "apps", Mode: mode, Revision: testRevision, Ready: ready, Reason: reason, Message: message, Entries: entries}
	r.Tally()
	return r
}

func entry(id object.ID, action result.Action) result.Entry {
	return result.Entry{Object: id, Action: action}
}

// The events of a run, as Flux's controllers would send them: one on a
// change (the change set, ReconciliationSucceeded), one on a failure (its
// Flux reason, severity error; a dependency not ready is info, as
// kustomize-controller says it), drift reported as helm-controller's
// DriftDetected, and none on a no-op, a diff, a unit skipped on purpose
// or cancelled. The Kustomization's revision and its
// event.toolkit.fluxcd.io/ annotations are its metadata.
func TestEvents(t *testing.T) {
	t.Parallel()
	type ev struct {
		Kind, Name, Severity, Reason, Message string
	}
	release := result.Release{HelmRelease: "HelmRelease/apps/podinfo", Chart: "podinfo", Version: "6.5.0", Name: "podinfo", Namespace: "apps",
		Objects: []object.ID{podinfo}}
	withRelease := func(r *result.Result, entries ...result.Entry) *result.Result {
		for _, e := range entries {
			e.Release = release.HelmRelease
			r.Entries = append(r.Entries, e)
		}
		r.Releases = []result.Release{release}
		r.Tally()
		return r
	}
	tests := []struct {
		name string
		res  *result.Result
		want []ev
	}{
		{
			name: "a change is the change set",
			res:  resultOf(result.ModeApply, result.ReasonApplySucceed, true, "applied", entry(web, result.Configured), entry(webSvc, result.Created), entry(podinfo, result.Unchanged)),
			want: []ev{{"Kustomization", "apps", "info", "ReconciliationSucceeded", "Deployment/apps/web configured\nService/apps/web created"}},
		},
		{
			name: "a prune is a change",
			res:  resultOf(result.ModeApply, result.ReasonApplySucceed, true, "applied", entry(web, result.Unchanged), entry(webSvc, result.Deleted)),
			want: []ev{{"Kustomization", "apps", "info", "ReconciliationSucceeded", "Service/apps/web deleted"}},
		},
		{
			name: "a no-op is silent",
			res:  resultOf(result.ModeApply, result.ReasonApplySucceed, true, "applied", entry(web, result.Unchanged)),
		},
		{
			name: "a failure is an error with its Flux reason",
			res:  resultOf(result.ModeApply, result.ReasonHealthCheckFailed, false, "Deployment/apps/web: timeout", entry(web, result.Configured)),
			want: []ev{{"Kustomization", "apps", "error", "HealthCheckFailed", "Deployment/apps/web: timeout"}},
		},
		{
			name: "a failed apply is ReconciliationFailed",
			res:  resultOf(result.ModeApply, result.ReasonApplyFailed, false, "Deployment/apps/web: forbidden"),
			want: []ev{{"Kustomization", "apps", "error", "ReconciliationFailed", "Deployment/apps/web: forbidden"}},
		},
		{
			name: "a build failure",
			res:  resultOf(result.ModeApply, result.ReasonBuildFailed, false, "kustomization.yaml: missing resource"),
			want: []ev{{"Kustomization", "apps", "error", "BuildFailed", "kustomization.yaml: missing resource"}},
		},
		{
			name: "a dependency not ready is info",
			res:  resultOf(result.ModeApply, result.ReasonDependencyNotReady, false, "skipped: dependency infra of this run is not ready"),
			want: []ev{{"Kustomization", "apps", "info", "DependencyNotReady", "skipped: dependency infra of this run is not ready"}},
		},
		{
			name: "suspended is silent",
			res:  resultOf(result.ModeApply, result.ReasonSuspended, false, "suspended"),
		},
		{
			name: "cancelled is silent",
			res:  resultOf(result.ModeApply, result.ReasonCancelled, false, "not started"),
		},
		{
			name: "a diff is silent, whatever it would change",
			res:  resultOf(result.ModeDiff, result.ReasonDiffSucceed, true, "diff", entry(web, result.Configured)),
		},
		{
			name: "drift reported is DriftDetected",
			res: func() *result.Result {
				r := resultOf(result.ModeDrift, result.ReasonDiffSucceed, true, "drift: 0 to create, 1 to configure, 0 to delete (reported, not corrected)", entry(web, result.Configured))
				r.Drifted = true
				return r
			}(),
			want: []ev{{"Kustomization", "apps", "error", "DriftDetected", "Cluster state has drifted from the desired state (reported, not corrected):\nDeployment/apps/web configured"}},
		},
		{
			name: "drift corrected is the change set",
			res: func() *result.Result {
				r := resultOf(result.ModeDrift, result.ReasonApplySucceed, true, "drift: corrected", entry(web, result.Configured))
				r.Drifted = true
				return r
			}(),
			want: []ev{{"Kustomization", "apps", "info", "ReconciliationSucceeded", "Deployment/apps/web configured"}},
		},
		{
			name: "no drift is silent",
			res:  resultOf(result.ModeDrift, result.ReasonDiffSucceed, true, "no drift", entry(web, result.Unchanged)),
		},
		{
			name: "a release installed",
			res:  withRelease(resultOf(result.ModeApply, result.ReasonApplySucceed, true, "applied"), entry(podinfo, result.Created)),
			want: []ev{
				{"Kustomization", "apps", "info", "ReconciliationSucceeded", "Deployment/apps/podinfo created"},
				{"HelmRelease", "podinfo", "info", "InstallSucceeded", "Helm install succeeded for release apps/podinfo with chart podinfo@6.5.0"},
			},
		},
		{
			name: "a release upgraded",
			res:  withRelease(resultOf(result.ModeApply, result.ReasonApplySucceed, true, "applied", entry(web, result.Unchanged)), entry(podinfo, result.Configured)),
			want: []ev{
				{"Kustomization", "apps", "info", "ReconciliationSucceeded", "Deployment/apps/podinfo configured"},
				{"HelmRelease", "podinfo", "info", "UpgradeSucceeded", "Helm upgrade succeeded for release apps/podinfo with chart podinfo@6.5.0"},
			},
		},
		{
			name: "a release unchanged beside a change says nothing of itself",
			res:  withRelease(resultOf(result.ModeApply, result.ReasonApplySucceed, true, "applied", entry(web, result.Configured)), entry(podinfo, result.Unchanged)),
			want: []ev{{"Kustomization", "apps", "info", "ReconciliationSucceeded", "Deployment/apps/web configured"}},
		},
		{
			name: "a release that failed",
			res: withRelease(resultOf(result.ModeApply, result.ReasonApplyFailed, false, "Deployment/apps/podinfo: refused"),
				result.Entry{Object: podinfo, Action: result.Failed, Reason: "refused"}),
			want: []ev{
				{"Kustomization", "apps", "error", "ReconciliationFailed", "Deployment/apps/podinfo: refused"},
				{"HelmRelease", "podinfo", "error", "InstallFailed", "Helm install failed for release apps/podinfo with chart podinfo@6.5.0: Deployment/apps/podinfo: refused"},
			},
		},
	}
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []ev
			for _, e := range Events(apps, tt.res, now) {
				got = append(got, ev{e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Severity, e.Reason, e.Message})
				if !e.Timestamp.Time.Equal(now) || e.ReportingInstance != ReportingInstance {
					t.Errorf("timestamp %v, instance %q", e.Timestamp, e.ReportingInstance)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// The metadata Flux's controllers send: the revision under the
// controller's group (a bare commit hash in source-controller's form),
// the object's event.toolkit.fluxcd.io/ annotations; a stable UID per
// object; the reporting controller by kind; a HelmRelease's labels (which
// Alerts select it by) and event annotations.
func TestEventMetadata(t *testing.T) {
	t.Parallel()
	res := resultOf(result.ModeApply, result.ReasonApplySucceed, true, "applied", entry(podinfo, result.Created), entry(web, result.Created))
	res.Entries[0].Release = "HelmRelease/apps/podinfo"
	res.Revision = "0123456789abcdef0123456789abcdef01234567"
	res.Releases = []result.Release{{HelmRelease: "HelmRelease/apps/podinfo", Chart: "podinfo", Version: "6.5.0", Digest: "sha256:abc", Name: "podinfo", Namespace: "apps",
		Labels: map[string]string{"tier": "frontend"}, Annotations: map[string]string{"event.toolkit.fluxcd.io/owner": "team-a"}}}
	events := Events(apps, res, time.Now())
	if len(events) != 2 {
		t.Fatalf("events: %+v", events)
	}
	ks, hr := events[0], events[1]
	if diff := cmp.Diff(map[string]string{
		"kustomize.toolkit.fluxcd.io/revision": "sha1:0123456789abcdef0123456789abcdef01234567",
		"event.toolkit.fluxcd.io/env":          "prod",
	}, ks.Metadata); diff != "" {
		t.Errorf("Kustomization metadata mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"helm.toolkit.fluxcd.io/revision": "6.5.0", "helm.toolkit.fluxcd.io/oci-digest": "sha256:abc",
		"event.toolkit.fluxcd.io/owner": "team-a"}, hr.Metadata); diff != "" {
		t.Errorf("HelmRelease metadata mismatch (-want +got):\n%s", diff)
	}
	if ks.ReportingController != "kustomize-controller" || hr.ReportingController != "helm-controller" || hr.InvolvedObject.APIVersion != "helm.toolkit.fluxcd.io/v2" {
		t.Errorf("controllers %q, %q; %s", ks.ReportingController, hr.ReportingController, hr.InvolvedObject.APIVersion)
	}
	again := Events(apps, res, time.Now())
	if ks.InvolvedObject.UID == "" || again[0].InvolvedObject.UID != ks.InvolvedObject.UID || hr.InvolvedObject.UID == ks.InvolvedObject.UID {
		t.Errorf("UIDs %q, %q, %q", ks.InvolvedObject.UID, again[0].InvolvedObject.UID, hr.InvolvedObject.UID)
	}
	if diff := cmp.Diff(map[string]string{"team": "web"}, ks.Labels); diff != "" {
		t.Errorf("labels mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"tier": "frontend"}, hr.Labels); diff != "" {
		t.Errorf("the HelmRelease's labels mismatch (-want +got):\n%s", diff)
	}
	a := mustAlert(t, "  eventSources:\n  - {kind: HelmRelease, name: '*', namespace: apps, matchLabels: {tier: frontend}}\n")
	if !a.matches(hr) || a.matches(ks) {
		t.Errorf("an Alert selecting HelmReleases by label takes the release's event %v, the Kustomization's %v", a.matches(hr), a.matches(ks))
	}
}

// A change set lists at most maxLines objects.
func TestChangeSetBounded(t *testing.T) {
	t.Parallel()
	var entries []result.Entry
	for i := range maxLines + 5 {
		entries = append(entries, entry(object.ID{Kind: "ConfigMap", Namespace: "apps", Name: strings.Repeat("x", i+1)}, result.Created))
	}
	got := changeSet(entries)
	if lines := strings.Split(got, "\n"); len(lines) != maxLines+1 || lines[maxLines] != "(and 5 more)" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
