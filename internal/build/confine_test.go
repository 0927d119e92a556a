package build

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfinedFS(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir()) // as Build passes it
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	writeFile(t, filepath.Join(root, "in.yaml"), "a: b\n")
	writeFile(t, filepath.Join(outside, "out.yaml"), "a: b\n")
	for name, target := range map[string]string{
		"file-link": filepath.Join(outside, "out.yaml"),
		"dir-link":  outside,
		"dangling":  filepath.Join(outside, "missing.yaml"),
		"in-link":   filepath.Join(root, "in.yaml"),
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := newConfinedFS(root, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{path: "in.yaml", ok: true},
		{path: "in-link", ok: true},
		{path: "new/dir/file.yaml", ok: true},
		{path: "../escape.yaml"},
		{path: "file-link"},
		{path: "dir-link/out.yaml"},
		{path: "dir-link/new.yaml"}, // would be created outside
		{path: "dangling"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			err := fsys.check(filepath.Join(root, tc.path))
			if (err == nil) != tc.ok {
				t.Fatalf("check = %v, want ok=%v", err, tc.ok)
			}
			if !tc.ok {
				if fsys.Exists(filepath.Join(root, tc.path)) {
					t.Error("Exists is true for a path outside the root")
				}
				if err := fsys.WriteFile(filepath.Join(root, tc.path), []byte("x")); err == nil {
					t.Error("WriteFile succeeded outside the root")
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "new.yaml")); !os.IsNotExist(err) {
		t.Errorf("a file was written outside the root: %v", err)
	}
	matches, err := fsys.Glob(filepath.Join(root, "*link"))
	if err != nil || len(matches) != 1 || filepath.Base(matches[0]) != "in-link" {
		t.Errorf("Glob = %v, %v; want only in-link", matches, err)
	}
}
