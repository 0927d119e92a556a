package object

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func configMap(name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "shop", "labels": map[string]any{"app": "shop", "tier": "web"}},
		"data":     data,
	}}
}

func TestDigest(t *testing.T) {
	t.Parallel()
	a := configMap("a", map[string]any{"x": "1", "y": "2"})
	same := configMap("a", map[string]any{"y": "2", "x": "1"}) // other insertion order
	if Digest(a) != Digest(same) {
		t.Error("equal objects have different digests")
	}
	for name, other := range map[string]*unstructured.Unstructured{
		"value":     configMap("a", map[string]any{"x": "1", "y": "3"}),
		"name":      configMap("b", map[string]any{"x": "1", "y": "2"}),
		"int type":  configMap("a", map[string]any{"x": int64(1), "y": "2"}),
		"extra key": configMap("a", map[string]any{"x": "1", "y": "2", "z": ""}),
	} {
		if Digest(a) == Digest(other) {
			t.Errorf("a different %s gives the same digest", name)
		}
	}
	if len(Digest(a)) != 32 {
		t.Errorf("digest %q is not 32 hex characters", Digest(a))
	}
}

// BenchmarkDigest hashes a 1,000-object unit, as every run does.
func BenchmarkDigest(b *testing.B) {
	objs := make([]*unstructured.Unstructured, 1000)
	for i := range objs {
		objs[i] = configMap(fmt.Sprintf("config-%04d", i), map[string]any{"index": fmt.Sprint(i), "settings.properties": "log.level=info\npool.size=8\n"})
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, u := range objs {
			Digest(u)
		}
	}
}
