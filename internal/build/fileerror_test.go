package build

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// A failed build says which file of the repository is at fault and, where
// its YAML gives one, at which line: the kustomization entry naming a
// missing resource, the line a manifest stops parsing, the document that
// is no object, the second declaration of one object, the kustomization
// whose patch has no target (kustomize names none of them in a
// structured way).
func TestBuildErrorsNameFileAndLine(t *testing.T) {
	t.Parallel()
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []FileError // Err not compared
	}{{
		name: "missing resource",
		files: map[string]string{
			"apps/web/kustomization.yaml": "resources:\n- a.yaml\n- missing.yaml\n",
			"apps/web/a.yaml":             cm("a"),
		},
		want: []FileError{{File: "apps/web/kustomization.yaml", Line: 3}},
	}, {
		name: "missing resource of a base",
		files: map[string]string{
			"apps/web/kustomization.yaml":  "resources:\n- ../base\n",
			"apps/base/kustomization.yaml": "# the base\nresources:\n  - deployment.yaml\n",
		},
		want: []FileError{{File: "apps/base/kustomization.yaml", Line: 3}},
	}, {
		name: "malformed YAML in a resource",
		files: map[string]string{
			"apps/web/kustomization.yaml": "resources:\n- a.yaml\n",
			"apps/web/a.yaml":             cm("a") + "---\n" + cm("b") + "data:\n  key: [unclosed\n",
		},
		want: []FileError{{File: "apps/web/a.yaml", Line: 11}},
	}, {
		name: "malformed YAML in a plain directory",
		files: map[string]string{
			"apps/web/a.yaml": cm("a") + "data:\n  key: value\n   bad: indent\n",
		},
		want: []FileError{{File: "apps/web/a.yaml", Line: 7}},
	}, {
		name: "a document that is no object",
		files: map[string]string{
			"apps/web/kustomization.yaml": "resources:\n- a.yaml\n",
			"apps/web/a.yaml":             cm("a") + "---\n---\n# b\napiVersion: v1\nmetadata:\n  name: b\n",
		},
		want: []FileError{{File: "apps/web/a.yaml", Line: 8}},
	}, {
		name: "malformed kustomization",
		files: map[string]string{
			"apps/web/kustomization.yaml": "resources:\n- a.yaml\nnamePrefix: [x\n",
			"apps/web/a.yaml":             cm("a"),
		},
		want: []FileError{{File: "apps/web/kustomization.yaml", Line: 3}},
	}, {
		name: "duplicate object",
		files: map[string]string{
			"apps/web/kustomization.yaml": "resources:\n- a.yaml\n- b.yaml\n",
			"apps/web/a.yaml":             cm("a"),
			"apps/web/b.yaml":             cm("b") + "---\n" + cm("a"),
		},
		want: []FileError{{File: "apps/web/b.yaml", Line: 6}},
	}, {
		name: "duplicate object in a plain directory",
		files: map[string]string{
			"apps/web/a.yaml": cm("a"),
			"apps/web/b.yaml": cm("b") + "---\n" + cm("a"),
		},
		want: []FileError{{File: "apps/web/b.yaml", Line: 6}},
	}, {
		name: "duplicate object of a plain directory and a kustomization in it",
		files: map[string]string{
			"apps/web/a.yaml":                 cm("a"),
			"apps/web/sub/kustomization.yaml": "resources:\n- b.yaml\n",
			"apps/web/sub/b.yaml":             cm("a"),
		},
		want: nil, // not the kustomization generated for apps/web, which is no file of the repository
	}, {
		name: "patch without a target",
		files: map[string]string{
			"apps/web/kustomization.yaml":  "resources:\n- ../base\n- a.yaml\n",
			"apps/web/a.yaml":              cm("a"),
			"apps/base/kustomization.yaml": "resources:\n- b.yaml\npatches:\n- path: patch.yaml\n",
			"apps/base/b.yaml":             cm("b"),
			"apps/base/patch.yaml":         "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nowhere\nspec:\n  replicas: 2\n",
		},
		want: []FileError{{File: "apps/base/kustomization.yaml"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for name, content := range tc.files {
				writeFile(t, filepath.Join(root, filepath.FromSlash(name)), content)
			}
			_, err := build(t, Options{Root: root, Path: filepath.Join(root, "apps", "web")})
			if err == nil {
				t.Fatal("built")
			}
			var got []FileError
			for _, fe := range FileErrors(err) {
				got = append(got, FileError{File: fe.File, Line: fe.Line})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("file errors (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

// An object that fails substitution is reported at the line of the field
// holding the placeholder at fault: a variable without a value, a ${}
// form envsubst cannot parse.
func TestSubstituteErrorsNameFileAndLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file string
		want       FileError
	}{{
		name: "no value for the name",
		file: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# b\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${NAME}\n  labels:\n    env: ${ENV}\n",
		want: FileError{File: "apps/cm.yaml", Line: 10},
	}, {
		name: "bad form",
		file: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  env: ${ENV}\n  url: https://${HOST\n",
		want: FileError{File: "apps/cm.yaml", Line: 7},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "apps", "cm.yaml"), tc.file)
			docs, err := decodeDocuments([]byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: docs[len(docs)-1]}
			sources := map[object.ID]string{object.IDOf(u): "apps/cm.yaml"}
			err = Substitute([]*unstructured.Unstructured{u}, Variables{Values: map[string]string{"ENV": "prod"}, Root: root}, sources, nil)
			fes := FileErrors(err)
			if len(fes) != 1 {
				t.Fatalf("file errors of %v: %v", err, fes)
			}
			if got := (FileError{File: fes[0].File, Line: fes[0].Line}); got != tc.want {
				t.Errorf("got %+v, want %+v (%v)", got, tc.want, err)
			}
		})
	}
}

// A build of files that are not the repository's hides its files from
// FileErrors, and nothing else.
func TestWithoutFiles(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("post-renderer [0]: %w", WithoutFiles(&FileError{File: "kustomization.yaml", Err: ErrRemoteBase}))
	if fes := FileErrors(err); len(fes) != 0 {
		t.Errorf("file errors %v", fes)
	}
	if !errors.Is(err, ErrRemoteBase) || err.Error() != "post-renderer [0]: "+ErrRemoteBase.Error() {
		t.Errorf("error %v: no longer the same", err)
	}
	if FileErrors(errors.Join(err, &FileError{File: "a.yaml"})) == nil {
		t.Error("the repository's file is hidden too")
	}
}
