// Package workspace makes a scratch copy of a repository directory, so later
// pipeline steps (decryption, generated kustomizations) can write files
// without ever touching the user's checkout.
//
// Files are hard links to the checkout's where the filesystem allows
// (creating 1,000 small files cost a second on a slow disk; linking them,
// 15 ms), else copies. So a file in a workspace must never be written in
// place, which would write through to the checkout: WriteFile replaces it.
package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Default limits applied when the corresponding Options field is zero.
const (
	DefaultMaxBytes int64 = 256 << 20
	DefaultMaxFiles       = 50_000
)

// Options configures Copy. Zero values select the defaults.
type Options struct {
	// MaxBytes caps the total size of the regular files copied.
	// Default DefaultMaxBytes.
	MaxBytes int64
	// MaxFiles caps the number of entries (files, directories, symlinks)
	// copied. Default DefaultMaxFiles.
	MaxFiles int
	// TempDir is the parent of the scratch directory. Default os.TempDir().
	TempDir string
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	return o
}

// WriteFile writes data to path by replacing it (a new file renamed over
// it), never through an existing file, which in a workspace may be a hard
// link to the user's checkout.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".kustomize-deploy-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), perm)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// Workspace is a private (0700) scratch copy of a repository directory.
type Workspace struct {
	// Root is the absolute path of the copy, symlinks evaluated, so a
	// resolved path inside the original maps to a resolved path inside
	// the copy (paths.Dir.Join).
	Root string
}

// Copy copies the directory tree at root, an absolute path with symlinks
// evaluated (paths.Resolve gives one), into a new temporary directory.
//
// It skips every entry named .git, copies regular files and directories,
// and re-creates a symlink whose target stays inside root as a relative
// symlink to the same place in the copy, so kustomize sees the same layout
// (and applies the same load restrictions) as in the checkout. A symlink that
// resolves outside root, a dangling symlink, and any other file type
// (device, socket, named pipe) are errors naming the entry. On error nothing
// is left behind.
func Copy(ctx context.Context, root string, opts Options) (*Workspace, error) {
	opts = opts.withDefaults()
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("repository root '%s': not an absolute path", root)
	}
	if fi, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("repository root '%s': %w", root, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("repository root '%s': not a directory", root)
	}

	// MkdirTemp creates the directory with mode 0700.
	tmp, err := os.MkdirTemp(opts.TempDir, "kustomize-deploy-")
	if err == nil {
		var real string
		if real, err = filepath.EvalSymlinks(tmp); err != nil {
			_ = os.RemoveAll(tmp)
		}
		tmp = real
	}
	if err != nil {
		return nil, fmt.Errorf("creating workspace: %w", err)
	}
	ws := &Workspace{Root: tmp}
	c := &copier{ctx: ctx, src: root, dst: tmp, opts: opts}
	if err := c.copyTree(); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	return ws, nil
}

// Close removes the copy. It is safe to call more than once.
func (w *Workspace) Close() error {
	if w == nil || w.Root == "" {
		return nil
	}
	if err := os.RemoveAll(w.Root); err != nil {
		return fmt.Errorf("removing workspace '%s': %w", w.Root, err)
	}
	return nil
}
