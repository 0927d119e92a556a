package health

import (
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// The kinds not waited for are ones kstatus calls Current the moment they
// exist; kinds with real readiness are still waited for. (Custom resources
// are Current while they have no status, but a controller may give them
// one: they are waited for too.)
func TestReadyOnceAppliedAgreesWithKstatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ apiVersion, kind string }{
		{"v1", "ConfigMap"}, {"v1", "Secret"}, {"batch/v1", "CronJob"},
		{"apps/v1", "Deployment"}, {"batch/v1", "Job"}, {"v1", "PersistentVolumeClaim"},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": tc.apiVersion, "kind": tc.kind,
			"metadata": map[string]any{"name": "x", "namespace": "ns", "generation": int64(1)},
			"spec":     map[string]any{},
		}}
		res, err := status.Compute(u)
		if err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		current := res.Status == status.CurrentStatus
		if got := ReadyOnceApplied(object.IDOf(u)); got != current {
			t.Errorf("%s/%s: ReadyOnceApplied = %v, but kstatus says %s for a fresh one", tc.apiVersion, tc.kind, got, res.Status)
		}
	}
}
