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

// DefaultMaxFiles applies when Options.MaxFiles is zero.
const DefaultMaxFiles = 100_000

// Options configures List and Copy. Zero values select the defaults. There
// is no cap on bytes: files are hard-linked where they can be, and a build
// reads only what it needs.
type Options struct {
	// MaxFiles caps the number of files listed. Default DefaultMaxFiles.
	MaxFiles int
	// TempDir is the parent of the scratch directories. Default: the
	// system's temporary directory, or the repository's .git directory
	// when only there can files be hard-linked (a checkout mounted from
	// another filesystem, as in a Docker action).
	TempDir string

	// link hard-links a file; nil means os.Link. Tests make it fail, as
	// across filesystems, to take the copying path.
	link func(oldname, newname string) error
}

func (o Options) withDefaults() Options {
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.link == nil {
		o.link = os.Link
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

	// snap and kept: a copy a Reuse snapshot keeps (see reuse.go);
	// released once handed back.
	snap     *Snapshot
	kept     *kept
	released bool
}

// Copy lists root (List) and copies it (Snapshot.Copy): for one build.
// A run of several units lists once and copies for each.
func Copy(ctx context.Context, root string, opts Options) (*Workspace, error) {
	s, err := List(ctx, root, opts)
	if err != nil {
		return nil, err
	}
	return s.Copy(ctx)
}

// Close removes the copy, or, from a Reuse snapshot, hands it back to
// it. It is safe to call more than once.
func (w *Workspace) Close() error {
	if w == nil || w.Root == "" || w.released {
		return nil
	}
	if w.kept != nil {
		w.released = true
		return w.snap.reuse.give(w.snap, w.kept)
	}
	if err := os.RemoveAll(w.Root); err != nil {
		return fmt.Errorf("removing workspace '%s': %w", w.Root, err)
	}
	return nil
}
