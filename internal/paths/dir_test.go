package paths

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	for _, d := range []string{".git", "clusters/prod/apps", "outside"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "file.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, "clusters", "prod"), filepath.Join(repo, "prod")); err != nil {
		t.Fatal(err)
	}
	apps := filepath.Join(repo, "clusters", "prod", "apps")
	for _, tc := range []struct {
		name, path, root string
		want             Dir
		err              error
		which            string
	}{
		{name: "git work tree is the root", path: apps, want: Dir{Root: repo, Path: apps, Rel: "clusters/prod/apps"}},
		{name: "symlinks evaluated", path: filepath.Join(repo, "prod", "apps"), want: Dir{Root: repo, Path: apps, Rel: "clusters/prod/apps"}},
		{name: "explicit root", path: apps, root: filepath.Join(repo, "clusters"), want: Dir{Root: filepath.Join(repo, "clusters"), Path: apps, Rel: "prod/apps"}},
		{name: "the root itself", path: repo, want: Dir{Root: repo, Path: repo, Rel: "."}},
		{name: "required", err: ErrRequired, which: "path"},
		{name: "missing", path: filepath.Join(repo, "nope"), err: ErrNotDir, which: "path"},
		{name: "a file", path: filepath.Join(repo, "file.yaml"), err: ErrNotDir, which: "path"},
		{name: "root missing", path: apps, root: filepath.Join(repo, "nope"), err: ErrNotDir, which: "root"},
		{name: "outside the root", path: filepath.Join(repo, "outside"), root: filepath.Join(repo, "clusters"), err: ErrOutsideRoot, which: "path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Resolve(tc.path, tc.root)
			if tc.err != nil {
				var pe *Error
				if !errors.Is(err, tc.err) || !errors.As(err, &pe) || pe.Which != tc.which {
					t.Fatalf("Resolve = %+v, %v; want %v about the %s", got, err, tc.err, tc.which)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDirJoin(t *testing.T) {
	t.Parallel()
	d := Dir{Root: "/repo", Path: "/repo/clusters/prod", Rel: "clusters/prod"}
	if diff := cmp.Diff(Dir{Root: "/tmp/copy", Path: "/tmp/copy/clusters/prod", Rel: "clusters/prod"}, d.Join("/tmp/copy")); diff != "" {
		t.Errorf("Join mismatch (-want +got):\n%s", diff)
	}
}

// Messages name the path and the problem, never a flag: each front end
// names its own.
func TestErrorMessages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Which: "path", Err: ErrRequired}, "a path is required"},
		{&Error{Which: "path", Path: "apps", Err: ErrNotDir}, "path apps is not a directory"},
		{&Error{Which: "path", Path: "/x", Root: "/repo", Err: ErrOutsideRoot}, "path /x is outside the root /repo"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
