package object

import "testing"

func TestLine(t *testing.T) {
	t.Parallel()
	data := []byte(`# settings
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  namespace: shop
data: {x: "1"}
---
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: b}
`)
	for _, tc := range []struct {
		id   ID
		want int
	}{
		{ID{Kind: "ConfigMap", Name: "a", Namespace: "shop"}, 2}, // no namespace in the file: kustomize gave it
		{ID{Kind: "ConfigMap", Name: "b", Namespace: "shop"}, 7},
		{ID{Kind: "ConfigMap", Name: "b", Namespace: "other"}, 0},
		{ID{Group: "apps", Kind: "Deployment", Name: "b", Namespace: "shop"}, 15},
		{ID{Kind: "Secret", Name: "a"}, 0},
	} {
		if got := Line(data, tc.id); got != tc.want {
			t.Errorf("Line(%v) = %d, want %d", tc.id, got, tc.want)
		}
	}
	if got := Line([]byte("a: [\n"), ID{Kind: "ConfigMap", Name: "a"}); got != 0 {
		t.Errorf("broken YAML: line %d", got)
	}
}
