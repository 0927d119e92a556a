package testcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// cached returns ${XDG_CACHE_HOME:-$HOME/.cache}/kustomize-deploy/testenv/name,
// filling it with build first unless an earlier run completed it. Builders
// in other processes (test packages run in parallel) are serialised by a
// file lock, and a build lands by renaming a finished temporary directory,
// so a half-built directory is never used.
func cached(ctx context.Context, name string, log io.Writer, build func(tmp string) error) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the test binaries (set XDG_CACHE_HOME or HOME): %w", err)
	}
	base := filepath.Join(cache, "kustomize-deploy", "testenv")
	dir := filepath.Join(base, name)
	if complete(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(ctx, dir+".lock", log)
	if err != nil {
		return "", err
	}
	defer unlock()
	if complete(dir) { // another process built it while we waited
		return dir, nil
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	if err := build(tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, completeMarker), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return "", err
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return dir, nil
}
