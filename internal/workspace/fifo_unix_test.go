//go:build unix

package workspace_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

func TestCopyRefusesFifo(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	tree(t, src, map[string]string{"apps/ok.yaml": "a: b"})
	if err := syscall.Mkfifo(filepath.Join(src, "apps", "pipe"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	parent := t.TempDir()
	_, err := workspace.Copy(context.Background(), src, workspace.Options{TempDir: parent})
	if !errors.Is(err, workspace.ErrUnsupportedFile) {
		t.Fatalf("err = %v, want ErrUnsupportedFile", err)
	}
	for _, s := range []string{"apps/pipe", "named pipe"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}
