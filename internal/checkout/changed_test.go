package checkout

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What a pull request changed is what its head holds against its base:
// commits since, edits not committed, deletions, renames (both paths) and
// new files, except ignored ones; below the directory asked about only.
func TestChanged(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "config", "user.email", "t@example.com")
	git(t, repo, "config", "user.name", "t")
	for _, f := range []string{"cfg/a/x.yaml", "cfg/b/y.yaml", "cfg/c/old.yaml", "cfg/d/gone.yaml", "other/z.yaml"} {
		write(t, filepath.Join(repo, f), f)
	}
	write(t, filepath.Join(repo, ".gitignore"), "*.tmp\n")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "base")
	base := git(t, repo, "rev-parse", "HEAD")

	write(t, filepath.Join(repo, "cfg/a/x.yaml"), "committed")
	git(t, repo, "mv", "cfg/c/old.yaml", "cfg/c/new.yaml")
	write(t, filepath.Join(repo, "other/z.yaml"), "outside the directory")
	git(t, repo, "commit", "-qam", "head")
	write(t, filepath.Join(repo, "cfg/b/y.yaml"), "not committed")
	if err := os.Remove(filepath.Join(repo, "cfg/d/gone.yaml")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(repo, "cfg/e/untracked file.yaml"), "new")
	write(t, filepath.Join(repo, "cfg/e/scratch.tmp"), "ignored")

	got, err := Changed(context.Background(), filepath.Join(repo, "cfg"), base)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/x.yaml", "b/y.yaml", "c/new.yaml", "c/old.yaml", "d/gone.yaml", "e/untracked file.yaml"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Changed (-want +got):\n%s", diff)
	}
	if _, err := Changed(context.Background(), repo, "0123456789012345678901234567890123456789"); err == nil {
		t.Error("a commit the clone does not have: no error")
	}
}
