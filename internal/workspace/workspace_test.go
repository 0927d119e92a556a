package workspace_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// tree writes files (path → content) below dir; a content starting with
// "->" creates a symlink to the rest instead.
func tree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// inCopy maps each path named in want to what read gives for it below
// root; nil for a nil want.
func inCopy(t *testing.T, root string, want map[string]string, read func(string) (string, error)) map[string]string {
	t.Helper()
	if want == nil {
		return nil
	}
	got := map[string]string{}
	for p := range want {
		v, err := read(filepath.Join(root, p))
		if err != nil {
			t.Errorf("%s in the copy: %v", p, err)
			continue
		}
		got[p] = v
	}
	return got
}

func TestCopy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		opts  workspace.Options
		// want maps paths in the copy to the content read through them.
		want map[string]string
		// absent paths must not exist in the copy.
		absent []string
		// links must be symlinks in the copy, with this relative target.
		links map[string]string
		// outside must be symlinks in the copy to this target of the
		// original (relative to it), as an absolute path: outside the copy.
		outside map[string]string
		wantErr error
		errHas  []string
	}{
		{
			name: "files and directories",
			files: map[string]string{
				"kustomization.yaml": "resources: [apps]\n",
				"apps/deploy.yaml":   "kind: Deployment\n",
				"apps/deep/x/y.txt":  "y",
			},
			want: map[string]string{
				"kustomization.yaml": "resources: [apps]\n",
				"apps/deploy.yaml":   "kind: Deployment\n",
				"apps/deep/x/y.txt":  "y",
			},
		},
		{
			name: ".git skipped at any depth",
			files: map[string]string{
				".git/config":      "[core]",
				".git/objects/a/b": "blob",
				"sub/.git":         "gitdir: ../.git/modules/sub",
				"sub/file.yaml":    "a: b",
			},
			want:   map[string]string{"sub/file.yaml": "a: b"},
			absent: []string{".git", "sub/.git"},
		},
		{
			name: "symlink to file inside root kept as relative symlink",
			files: map[string]string{
				"base/secret.yaml":    "kind: Secret",
				"overlay/secret.yaml": "->" + "../base/secret.yaml",
			},
			want:  map[string]string{"overlay/secret.yaml": "kind: Secret"},
			links: map[string]string{"overlay/secret.yaml": filepath.Join("..", "base", "secret.yaml")},
		},
		{
			name: "symlink chain and directory symlink resolved to final target",
			files: map[string]string{
				"real/file.txt": "content",
				"hop":           "->real",
				"a/dir":         "->../hop",
			},
			want:  map[string]string{"a/dir/file.txt": "content", "hop/file.txt": "content"},
			links: map[string]string{"a/dir": filepath.Join("..", "real"), "hop": "real"},
		},
		{
			name:    "symlink outside root: kept pointing outside, for a build that reads it to refuse",
			files:   map[string]string{"apps/passwd": "->/etc/passwd", "apps/ok.yaml": "a: b"},
			want:    map[string]string{"apps/ok.yaml": "a: b"},
			outside: map[string]string{"apps/passwd": "/etc/passwd"},
		},
		{
			name:    "relative symlink escaping root",
			files:   map[string]string{"apps/up": "->../../.."},
			outside: map[string]string{"apps/up": "../../.."},
		},
		{
			name:    "dangling symlink",
			files:   map[string]string{"gone": "->nowhere"},
			outside: map[string]string{"gone": "nowhere"},
		},
		{
			name:    "symlink cycle",
			files:   map[string]string{"a": "->b", "b": "->a"},
			outside: map[string]string{"a": "b", "b": "a"},
		},
		{
			name:    "symlink into .git",
			files:   map[string]string{".git/HEAD": "ref", "head": "->.git/HEAD"},
			outside: map[string]string{"head": ".git/HEAD"},
		},
		{
			name:    "file count cap",
			files:   map[string]string{"a": "1", "b": "2", "c": "3"},
			opts:    workspace.Options{MaxFiles: 2},
			wantErr: workspace.ErrTooManyFiles,
			errHas:  []string{"2 files"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := t.TempDir()
			tree(t, src, tt.files)
			parent := t.TempDir()
			tt.opts.TempDir = parent

			ws, err := workspace.Copy(context.Background(), src, tt.opts)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				if left, _ := os.ReadDir(parent); len(left) != 0 {
					t.Errorf("failed Copy left %d entries behind", len(left))
				}
				return
			}
			if err != nil {
				t.Fatalf("Copy: %v", err)
			}
			t.Cleanup(func() { _ = ws.Close() })

			readFile := func(p string) (string, error) {
				data, err := os.ReadFile(p)
				return string(data), err
			}
			if diff := cmp.Diff(tt.want, inCopy(t, ws.Root, tt.want, readFile)); diff != "" {
				t.Errorf("contents in the copy mismatch (-want +got):\n%s", diff)
			}
			for _, p := range tt.absent {
				if _, err := os.Lstat(filepath.Join(ws.Root, p)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists in copy (err %v)", p, err)
				}
			}
			for p, want := range tt.outside {
				got, err := os.Readlink(filepath.Join(ws.Root, p))
				if !filepath.IsAbs(want) {
					want = filepath.Join(src, filepath.Dir(p), want)
				}
				if err != nil || got != want {
					t.Errorf("%s links to %q (%v), want %q: where the original pointed", p, got, err, want)
				}
			}
			if diff := cmp.Diff(tt.links, inCopy(t, ws.Root, tt.links, os.Readlink)); diff != "" {
				t.Errorf("symlinks in the copy mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCopyIsPrivateAndDetached(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	tree(t, src, map[string]string{"a/b.txt": "original"})

	ws, err := workspace.Copy(context.Background(), src, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("workspace mode = %o, want 0700", perm)
	}
	// Files may be hard links to the original: writes go through WriteFile.
	if err := workspace.WriteFile(filepath.Join(ws.Root, "a", "b.txt"), []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(src, "a", "b.txt")); string(got) != "original" {
		t.Errorf("writing the copy changed the original: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(ws.Root, "a", "b.txt")); string(got) != "changed" {
		t.Errorf("the copy reads %q after WriteFile, want %q", got, "changed")
	}
	if fi, _ := os.Stat(filepath.Join(src, "a", "b.txt")); fi.Mode().Perm() != 0o644 {
		t.Errorf("writing the copy changed the original's mode to %o", fi.Mode().Perm())
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws.Root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left %s behind (err %v)", ws.Root, err)
	}
	if err := ws.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCopyHonoursContext(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	tree(t, src, map[string]string{"a": "1"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := workspace.Copy(ctx, src, workspace.Options{TempDir: t.TempDir()}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// In a git work tree the copy holds what a commit of it would: tracked
// files and untracked ones git does not ignore; not ignored ones, nor
// tracked files deleted from the work tree.
func TestListFollowsGit(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	tree(t, src, map[string]string{
		".gitignore":          "secrets.env\nbuild/\n",
		"app/deploy.yaml":     "kind: Deployment\n",
		"app/deleted.yaml":    "kind: ConfigMap\n",
		"app/untracked.yaml":  "kind: Service\n",
		"app/secrets.env":     "PASSWORD=hunter2\n",
		"build/output/a.yaml": "generated",
	})
	git := func(args ...string) {
		out, err := exec.Command("git", append([]string{"-C", src}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".gitignore", "app/deploy.yaml", "app/deleted.yaml")
	git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "x")
	if err := os.Remove(filepath.Join(src, "app/deleted.yaml")); err != nil {
		t.Fatal(err)
	}
	snap, err := workspace.List(context.Background(), src, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := snap.Copy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	want := map[string]bool{
		".gitignore": true, "app/deploy.yaml": true, "app/untracked.yaml": true,
		"app/secrets.env": false, "build/output/a.yaml": false, "app/deleted.yaml": false, ".git": false,
	}
	got := map[string]bool{}
	for p := range want {
		_, err := os.Lstat(filepath.Join(ws.Root, p))
		got[p] = err == nil
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths in the copy mismatch (-want +got):\n%s", diff)
	}
	if snap.Len() != 3 {
		t.Errorf("listed %d files, want 3", snap.Len())
	}
}

// One listing serves every unit of a run: each copy is its own.
func TestSnapshotCopiesAreIndependent(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	tree(t, src, map[string]string{"app/kustomization.yaml": "resources: []\n"})
	snap, err := workspace.List(context.Background(), src, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := snap.Copy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := snap.Copy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := workspace.WriteFile(filepath.Join(a.Root, "app/kustomization.yaml"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(b.Root, "app/kustomization.yaml")); string(got) != "resources: []\n" {
		t.Errorf("a write in one copy reached another: %q", got)
	}
}
