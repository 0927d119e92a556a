package validate

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func TestSizes(t *testing.T) {
	t.Parallel()
	cm := func(name string, bytes int) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "apps"}, "data": map[string]any{"blob": strings.Repeat("x", bytes)}}}
	}
	small, edge, big := cm("small", 1000), cm("edge", MaxObjectBytes-200), cm("big", 2<<20)
	sources := map[object.ID]string{object.IDOf(big): "blobs/big.yaml"}
	if err := Sizes([]*unstructured.Unstructured{small, edge}, sources); err != nil {
		t.Errorf("objects under the limit: %v", err)
	}
	err := Sizes([]*unstructured.Unstructured{small, big, edge}, sources)
	if err == nil || !strings.Contains(err.Error(), "ConfigMap/apps/big (blobs/big.yaml): 2.0 MiB serialised, over the 1.5 MiB") || strings.Contains(err.Error(), "small") {
		t.Errorf("error %v", err)
	}
}

func TestSecretData(t *testing.T) {
	t.Parallel()
	secret := func(name string, data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": name, "namespace": "apps"}, "data": data}}
	}
	good := secret("good", map[string]any{"password": "aHVudGVyMg=="})
	bad := secret("bad", map[string]any{"password": "hunter2!", "user": "c3Zj"})
	sources := map[object.ID]string{object.IDOf(bad): "apps/db.yaml"}
	if err := SecretData([]*unstructured.Unstructured{good}, sources); err != nil {
		t.Errorf("base64 data: %v", err)
	}
	err := SecretData([]*unstructured.Unstructured{good, bad}, sources)
	if err == nil || err.Error() != "Secret/apps/bad (apps/db.yaml): data.password: invalid base64 (format byte)" {
		t.Errorf("error %v", err)
	}
}
