package health

import (
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func TestNotReadyErrorMessage(t *testing.T) {
	t.Parallel()
	web := object.ID{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "web"}
	job := object.ID{Group: "batch", Kind: "Job", Namespace: "ns", Name: "migrate"}
	release := func(name string) object.ID {
		return object.ID{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease", Namespace: "ns", Name: name}
	}
	repo := object.ID{Group: "source.toolkit.fluxcd.io", Kind: "HelmRepository", Namespace: "ns", Name: "charts"}
	unobservedRelease := func(name string) Unready {
		return Unready{Object: release(name), Status: "InProgress", Message: "HelmRelease generation is 1, but latest observed generation is -1"}
	}
	for _, tc := range []struct {
		name string
		err  *NotReadyError
		want string
	}{
		{
			name: "timed out, with pods",
			err: &NotReadyError{TimedOut: true, Timeout: 2 * time.Minute, Unready: []Unready{
				{Object: web, Status: "InProgress", Message: "Available: 0/1", Pods: []string{"pod web-1 not ready: containers not ready", "pod web-2 not ready: phase Pending"}},
			}},
			want: "timeout after 2m0s waiting for 1 object(s) to become ready:\n" +
				"  - Deployment/ns/web: InProgress: Available: 0/1 (pod web-1 not ready: containers not ready; pod web-2 not ready: phase Pending)",
		},
		{
			name: "failed, without a message",
			err: &NotReadyError{Unready: []Unready{
				{Object: web, Status: "Unknown"},
				{Object: job, Status: "Failed", Message: "Job has reached the specified backoff limit"},
			}},
			want: "2 object(s) failed:\n" +
				"  - Deployment/ns/web: Unknown\n" +
				"  - Job/ns/migrate: Failed: Job has reached the specified backoff limit",
		},
		{
			name: "only unobserved, grouped by kind, apart from the slow",
			err: &NotReadyError{Waited: 31 * time.Second, Unobserved: []Unready{
				unobservedRelease("a"), unobservedRelease("b"),
				{Object: repo, Status: "InProgress"},
			}},
			want: "3 object(s) not observed by any controller after 31s (status.observedGeneration never set):\n" +
				"  - no controller seems to act on HelmRelease.helm.toolkit.fluxcd.io: is helm-controller running? — 2 objects: HelmRelease/ns/a, HelmRelease/ns/b\n" +
				"  - HelmRepository/ns/charts: no controller seems to act on HelmRepository.source.toolkit.fluxcd.io: is source-controller running?",
		},
		{
			name: "timed out, a slow object and an unobserved one",
			err: &NotReadyError{
				TimedOut: true, Timeout: 5 * time.Minute, Waited: 5 * time.Minute,
				Unready:    []Unready{{Object: web, Status: "InProgress", Message: "Available: 0/1"}},
				Unobserved: []Unready{unobservedRelease("podinfo")},
			},
			want: "timeout after 5m0s waiting for 1 object(s) to become ready:\n" +
				"  - Deployment/ns/web: InProgress: Available: 0/1\n" +
				"1 object(s) not observed by any controller after 5m0s (status.observedGeneration never set):\n" +
				"  - HelmRelease/ns/podinfo: no controller seems to act on HelmRelease.helm.toolkit.fluxcd.io: is helm-controller running?",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() =\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
