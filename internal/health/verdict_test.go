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
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() =\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
