package diff_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func benchDeployment(image string, replicas int64) *unstructured.Unstructured {
	containers := []any{}
	for i := range 3 {
		containers = append(containers, map[string]any{
			"name":  fmt.Sprintf("c%d", i),
			"image": image,
			"env": []any{
				map[string]any{"name": "LOG_LEVEL", "value": "info"},
				map[string]any{"name": "POOL_SIZE", "value": "8"},
			},
			"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}},
		})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "bench", "resourceVersion": "42", "uid": "u-1",
			"labels":        map[string]any{"app": "web"},
			"managedFields": []any{map[string]any{"manager": "kustomize-deploy", "operation": "Apply"}},
		},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": containers},
			},
		},
		"status": map[string]any{"readyReplicas": int64(1)},
	}}
}

// BenchmarkUnifiedDiffDeployment renders the diff of a Deployment whose
// image and replicas changed, as diff mode does for every changed object.
func BenchmarkUnifiedDiffDeployment(b *testing.B) {
	before, after := benchDeployment("web:1.0.0", 1), benchDeployment("web:1.1.0", 3)
	id := object.ID{Group: "apps", Kind: "Deployment", Namespace: "bench", Name: "web"}
	b.ReportAllocs()
	for b.Loop() {
		if diff.Unified(id, before, after, diff.Secrets{}) == "" {
			b.Fatal("empty diff")
		}
	}
}

// BenchmarkUnifiedDiffSecret renders a Secret's diff, values masked.
func BenchmarkUnifiedDiffSecret(b *testing.B) {
	secret := func(v string) *unstructured.Unstructured {
		data := map[string]any{}
		for i := range 20 {
			data[fmt.Sprintf("key-%02d", i)] = v
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "creds", "namespace": "bench"},
			"type":     "Opaque", "data": data,
		}}
	}
	before, after := secret("b2xk"), secret("bmV3")
	id := object.ID{Kind: "Secret", Namespace: "bench", Name: "creds"}
	b.ReportAllocs()
	for b.Loop() {
		if diff.Unified(id, before, after, diff.Secrets{}) == "" {
			b.Fatal("empty diff")
		}
	}
}
