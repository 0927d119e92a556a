package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/release"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func checksums(t *testing.T) string {
	t.Helper()
	var sums []string
	for _, name := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64.exe", "windows_arm64.exe"} {
		sums = append(sums, strings.Repeat("b", 64)+"  kustomize-deploy_"+name)
	}
	path := filepath.Join(t.TempDir(), "checksums.txt")
	if err := os.WriteFile(path, []byte(strings.Join(sums, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func repoCopy(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	copyFile(t, "../../action.yml", filepath.Join(root, "action.yml"))
	copyFile(t, "../../setup/action.yml", filepath.Join(root, "setup", "action.yml"))
	return root
}

// The release commit: the action's and setup's version and repository,
// and the checksums both verify the binary with, in one go.
func TestPin(t *testing.T) {
	root := repoCopy(t)
	var log bytes.Buffer
	if err := pin(root, "v2.0.0", "acme/kustomize-deploy", checksums(t), &log); err != nil {
		t.Fatal(err)
	}
	action, _ := os.ReadFile(filepath.Join(root, "action.yml"))
	setup, _ := os.ReadFile(filepath.Join(root, "setup", "action.yml"))
	copied, _ := os.ReadFile(filepath.Join(root, "setup", "checksums.txt"))
	pins, err := release.ReadActionPins(action)
	if err != nil || pins != (release.ActionPins{Version: "v2.0.0", Repository: "acme/kustomize-deploy"}) {
		t.Errorf("action.yml pins %+v (%v):\n%s", pins, err, action)
	}
	if !strings.Contains(string(setup), "KD_PIN: v2.0.0 #") || len(copied) == 0 {
		t.Errorf("after pinning:\n%s\n%s", setup, copied)
	}
	if got := log.String(); got != "pinned action.yml\npinned setup/action.yml\npinned setup/checksums.txt\n" {
		t.Errorf("log %q", got)
	}
}

func TestPinWithoutChecksumsChangesNothing(t *testing.T) {
	root := repoCopy(t)
	before, _ := os.ReadFile(filepath.Join(root, "action.yml"))
	if err := pin(root, "v2.0.0", "acme/kustomize-deploy", filepath.Join(root, "missing.txt"), &bytes.Buffer{}); err == nil {
		t.Error("pinned without checksums")
	}
	if err := pin(root, "2.0.0", "acme/kustomize-deploy", checksums(t), &bytes.Buffer{}); err == nil {
		t.Error("pinned a version without v")
	}
	after, _ := os.ReadFile(filepath.Join(root, "action.yml"))
	if !bytes.Equal(before, after) {
		t.Errorf("a failed pin changed action.yml:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(root, "setup", "checksums.txt")); err == nil {
		t.Error("a failed pin wrote setup/checksums.txt")
	}
}
