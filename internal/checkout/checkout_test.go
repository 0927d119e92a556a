package checkout

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := Git(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestUnitAtOtherCommits(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: ", err)
	}
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "config", "user.email", "t@example.com")
	git(t, repo, "config", "user.name", "t")
	write(t, filepath.Join(repo, "apps/web/cm.yaml"), "v1")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "one")
	first := git(t, repo, "rev-parse", "HEAD")
	write(t, filepath.Join(repo, "apps/web/cm.yaml"), "v2")
	write(t, filepath.Join(repo, "apps/api/cm.yaml"), "api")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "two")
	write(t, filepath.Join(repo, "apps/web/cm.yaml"), "uncommitted")

	web, err := paths.Resolve(filepath.Join(repo, "apps/web"), "")
	if err != nil {
		t.Fatal(err)
	}
	api, err := paths.Resolve(filepath.Join(repo, "apps/api"), "")
	if err != nil {
		t.Fatal(err)
	}
	w := &Worktrees{TempDir: t.TempDir()}
	ctx, cancel := context.WithCancel(t.Context())
	dir, err := w.Unit(ctx, first, web)
	if err != nil || dir == nil {
		t.Fatalf("web at the first commit: %v, %v", dir, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir.Path, "cm.yaml")); string(data) != "v1" {
		t.Errorf("web at the first commit reads %q", data)
	}
	if dir.Rel != web.Rel {
		t.Errorf("rel %q, want %q", dir.Rel, web.Rel)
	}
	// A unit that did not exist yet has no directory.
	if dir, err := w.Unit(ctx, first, api); err != nil || dir != nil {
		t.Errorf("api at the first commit: %v, %v", dir, err)
	}
	// A commit the clone lacks says so.
	if _, err := w.Unit(ctx, "9999999999999999999999999999999999999999", web); !errors.Is(err, ErrMissing) {
		t.Errorf("a missing commit: %v", err)
	}
	// The work tree itself is untouched, and Close leaves no worktree,
	// even once the run's context is done.
	if data, _ := os.ReadFile(filepath.Join(web.Path, "cm.yaml")); string(data) != "uncommitted" {
		t.Errorf("the work tree reads %q", data)
	}
	cancel()
	w.Close()
	if _, err := os.Stat(dir.Root); !os.IsNotExist(err) {
		t.Errorf("the worktree %s is still there: %v", dir.Root, err)
	}
	if list := git(t, repo, "worktree", "list", "--porcelain"); strings.Count("\n"+list, "\nworktree ") != 1 {
		t.Errorf("git still lists worktrees:\n%s", list)
	}
}
