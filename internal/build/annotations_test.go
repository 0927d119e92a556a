package build

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestAnnotation(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        string
		wantOK      bool
	}{
		{name: "none"},
		{name: "ours", annotations: map[string]string{"kustomize-deploy.dev/prune": "disabled"}, want: "disabled", wantOK: true},
		{name: "flux", annotations: map[string]string{"kustomize.toolkit.fluxcd.io/prune": "disabled"}, want: "disabled", wantOK: true},
		{name: "ours wins", annotations: map[string]string{"kustomize-deploy.dev/prune": "enabled", "kustomize.toolkit.fluxcd.io/prune": "disabled"}, want: "enabled", wantOK: true},
		{name: "other key", annotations: map[string]string{"kustomize-deploy.dev/ssa": "Merge"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			u.SetAnnotations(tc.annotations)
			got, ok := Annotation(u, "prune")
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("got %q, %v; want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
