package units

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// Only units whose build may read a file mentioning a Flux API group are
// rendered to find what they emit: through their directory, their
// components, and "../" paths of their kustomization files.
func TestMayEmit(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"apps/kustomization.yaml":              "resources:\n- ./web/ks.yaml\n",
		"apps/web/ks.yaml":                     "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n",
		"apps/web/app/kustomization.yaml":      "resources:\n- deploy.yaml\n",
		"apps/web/app/deploy.yaml":             "apiVersion: apps/v1\nkind: Deployment\n",
		"apps/api/app/kustomization.yaml":      "resources:\n- ../../shared\n",
		"apps/shared/kustomization.yaml":       "resources:\n- source.yaml\n",
		"apps/shared/source.yaml":              "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\n",
		"apps/remote/kustomization.yaml":       "resources:\n- https://github.com/acme/fleet//apps?ref=main\n",
		"components/common/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
		"components/flux/kustomization.yaml":   "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- ks.yaml\n",
		"components/flux/ks.yaml":              "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n",
		"outside/kustomization.yaml":           "resources:\n- ../../elsewhere\n",
		"legacy/Kustomization":                 "resources:\n- ../apps/web\n",
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := workspace.List(t.Context(), root, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := newEmitIndex(snap, root)
	tests := []struct {
		dir        string
		components []string
		want       bool
	}{
		{"apps", nil, true},          // holds a ks.yaml
		{"apps/web/app", nil, false}, // an app's manifests
		{"apps/web/app", []string{"../../../components/common"}, false},
		{"apps/web/app", []string{"../../../components/flux"}, true}, // a component with a Kustomization
		{"apps/api/app", nil, true},                                  // ../../shared holds a source
		{"apps/remote", nil, true},                                   // a remote resource: anything
		{"outside", nil, true},                                       // leaves the root: let the build say
		{"legacy", nil, true},                                        // a Kustomization file reaching ../apps/web, which holds a ks.yaml
		{".", nil, true},
	}
	for _, tt := range tests {
		if got := x.mayEmit(tt.dir, tt.components); got != tt.want {
			t.Errorf("mayEmit(%s, %v) = %v, want %v", tt.dir, tt.components, got, tt.want)
		}
	}
}
