package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestCurrentOnceApplied(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, answer string
		want         bool
	}{
		{"a Namespace just created", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\nstatus: {phase: Active}", true},
		{"a Namespace being deleted", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, deletionTimestamp: '2026-11-28T10:00:00Z'}\nstatus: {phase: Terminating}", false},
		{"a ClusterIP Service", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: 10.0.0.1, ports: [{port: 80}]}", true},
		{"a LoadBalancer without an address", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {type: LoadBalancer, ports: [{port: 80}]}", false},
		{"a ServiceAccount", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: app, namespace: shop}", true},
		{"a RoleBinding", "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: app, namespace: shop}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: app}", true},
		{"a Deployment: its controller reports", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, generation: 1}\nspec: {replicas: 1}", false},
		{"a custom resource without status: its controller has not looked yet", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: shop, generation: 1}", false},
		{"a CRD not yet established", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}", false},
		{"a ConfigMap: never waited for anyway", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.answer), &u.Object); err != nil {
				t.Fatal(err)
			}
			if got := CurrentOnceApplied(u); got != tc.want {
				t.Errorf("CurrentOnceApplied = %v, want %v", got, tc.want)
			}
		})
	}
}
