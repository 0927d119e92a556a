package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// The release commit: image, setup defaults and checksums, in one go.
func TestPin(t *testing.T) {
	root := t.TempDir()
	copyFile(t, "../../action.yml", filepath.Join(root, "action.yml"))
	copyFile(t, "../../setup/action.yml", filepath.Join(root, "setup", "action.yml"))
	var sums []string
	for _, name := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64.exe", "windows_arm64.exe"} {
		sums = append(sums, strings.Repeat("b", 64)+"  kustomize-deploy_"+name)
	}
	sumsPath := filepath.Join(t.TempDir(), "checksums.txt")
	if err := os.WriteFile(sumsPath, []byte(strings.Join(sums, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := "ghcr.io/acme/kustomize-deploy:v2.0.0@sha256:" + strings.Repeat("c", 64)
	if err := pin(root, image, "v2.0.0", "acme/kustomize-deploy", sumsPath); err != nil {
		t.Fatal(err)
	}
	action, _ := os.ReadFile(filepath.Join(root, "action.yml"))
	setup, _ := os.ReadFile(filepath.Join(root, "setup", "action.yml"))
	copied, _ := os.ReadFile(filepath.Join(root, "setup", "checksums.txt"))
	if !strings.Contains(string(action), "image: docker://"+image) || !strings.Contains(string(setup), "default: v2.0.0 #") || len(copied) == 0 {
		t.Errorf("after pinning:\n%s\n%s\n%s", action, setup, copied)
	}
	if err := pin(root, image, "v2.0.0", "acme/kustomize-deploy", filepath.Join(root, "missing.txt")); err == nil {
		t.Error("pinned without checksums")
	}
}
