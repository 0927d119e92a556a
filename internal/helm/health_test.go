package helm

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// spec.healthCheckExprs is read as the Kustomization's is: a kind and a
// current expression each; the waiter parses the expressions.
func TestReadReleaseHealthCheckExprs(t *testing.T) {
	r, err := ReadRelease(helmRelease(t, "v2", chartSpec+"  healthCheckExprs:\n  - apiVersion: cert-manager.io/v1\n    kind: Certificate\n    current: status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')\n    failed: status.conditions.exists(c, c.type == 'Ready' && c.status == 'False')\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []HealthCheckExpr{{APIVersion: "cert-manager.io/v1", Kind: "Certificate",
		Current: "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
		Failed:  "status.conditions.exists(c, c.type == 'Ready' && c.status == 'False')"}}
	if diff := cmp.Diff(want, r.HealthCheckExprs); diff != "" {
		t.Errorf("healthCheckExprs mismatch (-want +got):\n%s", diff)
	}
	for spec, msg := range map[string]string{
		"  healthCheckExprs:\n  - apiVersion: v1\n    kind: Pod\n":                     "spec.healthCheckExprs[0].current: required",
		"  healthCheckExprs:\n  - apiVersion: v1\n    kind: Pod\n    curent: 'true'\n": "spec.healthCheckExprs: curent is not a HelmRelease field this tool knows",
	} {
		if _, err := ReadRelease(helmRelease(t, "v2", chartSpec+spec)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", spec, err, msg)
		}
	}
}
