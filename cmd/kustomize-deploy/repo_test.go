package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Files a build never reads cannot fail it: a symlink out of the
// repository in docs/, a 1 GiB file. One a build does read is refused,
// naming it.
func TestOnlyWhatTheBuildReadsMatters(t *testing.T) {
	c := newCLI(t)
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "app/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n")
	if err := os.MkdirAll(filepath.Join(repo, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(repo, "docs/passwd")); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(repo, "docs/video.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(1 << 30); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	big.Close()
	o := c.run("build", "--path", filepath.Join(repo, "app"), "--root", repo)
	if o.code != exitOK {
		t.Fatalf("a unit that reads neither file failed: exit %d\n%s", o.code, o.stderr)
	}
	contains(t, "build output", o.stdout, "name: app")

	writeFile(t, filepath.Join(repo, "leaky/kustomization.yaml"), "resources:\n- ../docs/passwd\n")
	o = c.run("build", "--path", filepath.Join(repo, "leaky"), "--root", repo)
	if o.code != exitFail {
		t.Fatalf("a unit reading a symlink out of the repository: exit %d", o.code)
	}
	contains(t, "error", o.stderr, "leaky/kustomization.yaml", "../docs/passwd", "outside the repository root")
	if strings.Contains(o.stdout+o.stderr, "root:x:0:0") {
		t.Error("the file outside the repository was read")
	}
}
