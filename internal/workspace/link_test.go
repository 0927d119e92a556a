package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Where files cannot be hard-linked (another filesystem or mount point, as
// in the Docker action), they are copied, and the copy is as detached.
func TestCopyFallsBackToCopyingWhenLinksFail(t *testing.T) {
	t.Parallel()
	tried := 0
	link := func(oldname, newname string) error {
		tried++
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EXDEV}
	}
	src := t.TempDir()
	for _, name := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte("original "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := Copy(context.Background(), src, Options{link: link})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if tried != 1 {
		t.Errorf("tried to link %d times, want once (a probe, then copy)", tried)
	}
	for _, name := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		got, err := os.ReadFile(filepath.Join(ws.Root, name))
		if err != nil || string(got) != "original "+name {
			t.Errorf("%s in the copy: %q, %v", name, got, err)
		}
		a, _ := os.Stat(filepath.Join(src, name))
		b, _ := os.Stat(filepath.Join(ws.Root, name))
		if os.SameFile(a, b) {
			t.Errorf("%s is the same file as the original although linking failed", name)
		}
	}
	// An in-place write to a copied file does not reach the original.
	if err := os.WriteFile(filepath.Join(ws.Root, "a.yaml"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(src, "a.yaml")); string(got) != "original a.yaml" {
		t.Errorf("the original changed: %q", got)
	}
}

// A checkout on another filesystem than the temporary directory (a Docker
// action's bind mount) gets its copies in its own .git directory, where
// files can be linked, rather than copying every file for every unit.
func TestCopyGoesWhereLinksWork(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	gitDir := filepath.Join(src, ".git")
	if err := os.MkdirAll(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := func(oldname, newname string) error {
		if !strings.HasPrefix(newname, gitDir) { // "another filesystem"
			return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EXDEV}
		}
		return os.Link(oldname, newname)
	}
	ws, err := Copy(context.Background(), src, Options{link: link})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ws.Root, gitDir) {
		t.Errorf("the copy is in %s, not in %s", ws.Root, gitDir)
	}
	a, _ := os.Stat(filepath.Join(src, "a.yaml"))
	b, _ := os.Stat(filepath.Join(ws.Root, "a.yaml"))
	if !os.SameFile(a, b) {
		t.Error("the file was copied, not linked")
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(gitDir); len(left) != 0 {
		t.Errorf("left %d entries in .git", len(left))
	}
}

// Where links work, the files are the checkout's own (no data is copied).
func TestCopyLinksFiles(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "a.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := Copy(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	a, _ := os.Stat(filepath.Join(src, "a.yaml"))
	b, _ := os.Stat(filepath.Join(ws.Root, "a.yaml"))
	if !os.SameFile(a, b) {
		t.Error("a file on the same filesystem was copied, not linked")
	}
}
