package workspace

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// contents maps every entry below root to what it is: a file's content,
// "dir", or "-> target" for a symlink.
func contents(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case rel == ".":
		case d.Type()&fs.ModeSymlink != 0:
			to, err := os.Readlink(path)
			if err != nil {
				return err
			}
			out[rel] = "-> " + to
		case d.IsDir():
			out[rel] = "dir"
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A copy handed back to a Reuse snapshot is handed out again as the
// snapshot lists it, whatever the unit did in it; the checkout is never
// touched. Hard-linked and copied alike.
func TestReuseResetsTheCopy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		do   func(root string) error
	}{
		{"nothing", func(string) error { return nil }},
		{"a file replaced", func(root string) error {
			return WriteFile(filepath.Join(root, "app/kustomization.yaml"), []byte("resources: [x.yaml]\n"), 0o644)
		}},
		{"a file added", func(root string) error {
			return os.WriteFile(filepath.Join(root, "app/generated.yaml"), []byte("kind: ConfigMap\n"), 0o644)
		}},
		{"a directory added", func(root string) error {
			if err := os.MkdirAll(filepath.Join(root, "app/charts/x"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(root, "app/charts/x/Chart.yaml"), []byte("name: x\n"), 0o644)
		}},
		{"a file removed", func(root string) error { return os.Remove(filepath.Join(root, "base/cm.yaml")) }},
		{"a directory removed", func(root string) error { return os.RemoveAll(filepath.Join(root, "base")) }},
		{"a file made a directory", func(root string) error {
			if err := os.Remove(filepath.Join(root, "base/cm.yaml")); err != nil {
				return err
			}
			return os.Mkdir(filepath.Join(root, "base/cm.yaml"), 0o755)
		}},
		{"two directories swapped", func(root string) error {
			for _, mv := range [][2]string{{"app", "tmp"}, {"base", "app"}, {"tmp", "base"}} {
				if err := os.Rename(filepath.Join(root, mv[0]), filepath.Join(root, mv[1])); err != nil {
					return err
				}
			}
			return nil
		}},
		{"a file replaced deep down", func(root string) error {
			return WriteFile(filepath.Join(root, "base/deep/er/cm.yaml"), []byte("kind: Secret\n"), 0o644)
		}},
		{"a symlink re-pointed", func(root string) error {
			if err := os.Remove(filepath.Join(root, "link.yaml")); err != nil {
				return err
			}
			return os.Symlink("app/kustomization.yaml", filepath.Join(root, "link.yaml"))
		}},
	}
	for _, copying := range []bool{false, true} {
		for _, tt := range tests {
			name := tt.name
			if copying {
				name += ", copied"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				src := t.TempDir()
				files := map[string]string{
					"app/kustomization.yaml":  "resources: [../base]\n",
					"base/kustomization.yaml": "resources: [cm.yaml]\n",
					"base/cm.yaml":            "kind: ConfigMap\n",
					"top.yaml":                "kind: Namespace\n",
					"base/deep/er/cm.yaml":    "kind: ConfigMap\n",
				}
				for p, body := range files {
					if err := os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(src, p), []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.Symlink("base/cm.yaml", filepath.Join(src, "link.yaml")); err != nil {
					t.Fatal(err)
				}
				opts := Options{}
				if copying {
					opts.link = func(oldname, newname string) error {
						return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EXDEV}
					}
				}
				snap, err := List(context.Background(), src, opts)
				if err != nil {
					t.Fatal(err)
				}
				snap.Reuse()
				want := contents(t, src)
				a, err := snap.Copy(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if err := tt.do(a.Root); err != nil {
					t.Fatal(err)
				}
				root := a.Root
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				if err := a.Close(); err != nil { // twice: handed back once
					t.Fatal(err)
				}
				b, err := snap.Copy(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				c, err := snap.Copy(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if b.Root != root || c.Root == root {
					t.Errorf("copies %s then %s, want %s kept once", b.Root, c.Root, root)
				}
				if diff := cmp.Diff(want, contents(t, b.Root)); diff != "" {
					t.Errorf("the copy handed out again (-want +got):\n%s", diff)
				}
				// Again, in the copy reset once.
				if err := tt.do(b.Root); err != nil {
					t.Fatal(err)
				}
				if err := b.Close(); err != nil {
					t.Fatal(err)
				}
				if b, err = snap.Copy(context.Background()); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, contents(t, b.Root)); diff != "" {
					t.Errorf("the copy handed out a third time (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(want, contents(t, src)); diff != "" {
					t.Errorf("the checkout changed (-want +got):\n%s", diff)
				}
				for _, w := range []*Workspace{b, c} {
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
				}
				if err := snap.Close(); err != nil {
					t.Fatal(err)
				}
				for _, r := range []string{b.Root, c.Root} {
					if _, err := os.Stat(r); !os.IsNotExist(err) {
						t.Errorf("%s left behind after the snapshot closed: %v", r, err)
					}
				}
			})
		}
	}
}

// A copy closed after its snapshot is removed, not kept.
func TestReuseAfterCloseRemoves(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "a.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := List(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap.Reuse()
	ws, err := snap.Copy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws.Root); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", ws.Root, err)
	}
}
