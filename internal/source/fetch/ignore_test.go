package fetch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestExclude(t *testing.T) {
	tree := map[string]string{
		"deploy/app.yaml": "a: 1\n", "deploy/logo.png": "png", ".github/workflows/ci.yaml": "on: push\n",
		".gitignore": "x\n", "docs/readme.yaml": "d: 1\n", "nested/.sops.yaml": "creation_rules: []\n",
	}
	for _, tc := range []struct {
		name   string
		extra  map[string]string
		ignore *string
		want   []string
	}{
		{"defaults", nil, nil, []string{"deploy/app.yaml", "docs/readme.yaml"}},
		{"spec.ignore replaces the defaults, not Git's files", nil, ptr("/*\n!/deploy\n"), []string{"deploy/app.yaml", "deploy/logo.png"}},
		{"a .sourceignore for its own directory", map[string]string{"docs/.sourceignore": "*.yaml\n"}, nil,
			[]string{".github/workflows/ci.yaml", "deploy/app.yaml", "deploy/logo.png", "docs/.sourceignore", "nested/.sops.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, data := range tree {
				write(t, filepath.Join(dir, p), data)
			}
			for p, data := range tc.extra {
				write(t, filepath.Join(dir, p), data)
			}
			if err := Exclude(dir, tc.ignore); err != nil {
				t.Fatal(err)
			}
			var got []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					got = append(got, filepath.ToSlash(rel))
				}
				return err
			})
			if !slices.Equal(got, tc.want) {
				t.Errorf("files %v, want %v", got, tc.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
