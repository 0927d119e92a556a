package build

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// inputsDigest builds path (below root) from a workspace copy, as a run
// does, and returns the build's inputs and their digest over the checkout.
func inputsDigest(t *testing.T, root, path string) (Inputs, string) {
	t.Helper()
	ws, err := workspace.Copy(context.Background(), root, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	rel, _ := filepath.Rel(root, path)
	res := mustBuild(t, Options{Root: ws.Root, Path: filepath.Join(ws.Root, rel)})
	d, err := res.Inputs.Digest(root)
	if err != nil {
		t.Fatal(err)
	}
	return res.Inputs, d
}

func TestInputsDigestChangesExactlyWithWhatTheBuildReads(t *testing.T) {
	t.Parallel()
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"
	}
	for _, tc := range []struct {
		name    string
		change  func(t *testing.T, root string)
		changes bool
	}{
		{"nothing", func(*testing.T, string) {}, false},
		{"a file in an unrelated directory", func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "other", "x.yaml"), cm("x2"))
		}, false},
		{"a manifest of the plain directory", func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "app", "a.yaml"), cm("a2"))
		}, true},
		{"a new manifest in the plain directory", func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "app", "new.yaml"), cm("new"))
		}, true},
		{"a file of the base the overlay uses", func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "base", "b.yaml"), cm("b2"))
		}, true},
		{"a kustomization added to the plain directory", func(t *testing.T, root string) {
			writeFile(t, filepath.Join(root, "app", "kustomization.yaml"), "resources: [a.yaml]\n")
		}, true},
		{"a symlink retargeted", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "app", "link.yaml")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join("data", "m.txt"), filepath.Join(root, "app", "link.yaml")); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "app", "a.yaml"), cm("a"))
			writeFile(t, filepath.Join(root, "app", "overlay", "kustomization.yaml"), "resources: [../../base]\nnamePrefix: o-\n")
			writeFile(t, filepath.Join(root, "base", "kustomization.yaml"), "resources: [b.yaml]\n")
			writeFile(t, filepath.Join(root, "base", "b.yaml"), cm("b"))
			writeFile(t, filepath.Join(root, "other", "x.yaml"), cm("x"))
			writeFile(t, filepath.Join(root, "app", "data", "l.txt"), cm("l"))
			writeFile(t, filepath.Join(root, "app", "data", "m.txt"), cm("m"))
			if err := os.Symlink(filepath.Join("data", "l.txt"), filepath.Join(root, "app", "link.yaml")); err != nil {
				t.Fatal(err)
			}
			app := filepath.Join(root, "app")
			in, before := inputsDigest(t, root, app)
			if !in.Complete {
				t.Fatalf("a local build's inputs are not complete: %+v", in)
			}
			tc.change(t, root)
			after, err := in.Digest(root)
			if err != nil {
				t.Fatal(err)
			}
			if changed := after != before; changed != tc.changes {
				t.Errorf("digest changed = %v, want %v (inputs %+v)", changed, tc.changes, in)
			}
		})
	}
}
