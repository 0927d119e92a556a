package workspace

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

// Copy makes a private (0700) copy of the files listed, for one unit: hard
// links where the filesystem allows (a file in a workspace must never be
// written in place: see WriteFile), else copies. A symlink whose target
// stays inside the root becomes a relative symlink to the same place in
// the copy; one that leaves the root, dangles or points into .git keeps
// pointing where it did (an absolute path outside the copy), so a build
// that reads it fails naming it, and one that does not is not bothered.
// On error nothing is left behind.
func (s *Snapshot) Copy(ctx context.Context) (*Workspace, error) {
	if s.reuse != nil {
		if k := s.reuse.take(); k != nil {
			return &Workspace{Root: k.root, snap: s, kept: k}, nil
		}
	}
	parent, linkable := s.opts.TempDir, true
	if parent == "" {
		parent, linkable = s.linkableTempDir()
	}
	// MkdirTemp creates the directory with mode 0700.
	tmp, err := os.MkdirTemp(parent, "kustomize-deploy-")
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
	c := &copier{src: s.root, dst: tmp, made: map[string]bool{".": true}, link: s.opts.link, copy: !linkable}
	var k *kept
	if s.reuse != nil {
		k = &kept{root: tmp, c: c, files: make(map[string]fs.FileInfo, len(s.entries)), dirs: map[string]fs.FileInfo{}}
	}
	for _, e := range s.entries {
		err := ctx.Err()
		if err == nil {
			err = c.copyEntry(e)
		}
		if err == nil && k != nil {
			err = k.record(e.rel)
		}
		if err != nil {
			_ = os.RemoveAll(tmp)
			return nil, err
		}
	}
	if k != nil {
		if err := k.settle(slices.Collect(maps.Keys(c.made))); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, err
		}
	}
	return &Workspace{Root: tmp, snap: s, kept: k}, nil
}

// copier copies the files of the tree at src (absolute, symlinks
// resolved) into dst.
type copier struct {
	src, dst string
	made     map[string]bool // directories created, relative
	link     func(oldname, newname string) error
	// copy is set once a hard link failed (another filesystem, say):
	// from then on files are copied.
	copy bool
}

func (c *copier) copyEntry(e entry) error {
	if err := c.mkdirs(filepath.Dir(e.rel)); err != nil {
		return err
	}
	source, target := filepath.Join(c.src, e.rel), filepath.Join(c.dst, e.rel)
	if e.mode&fs.ModeSymlink != 0 {
		return c.copySymlink(e.rel, source, target)
	}
	return c.copyFile(e.rel, source, target, e.mode)
}

// mkdirs creates dir (relative) and its parents in the copy.
func (c *copier) mkdirs(dir string) error {
	if c.made[dir] {
		return nil
	}
	if err := c.mkdirs(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(c.dst, dir), 0o755); err != nil && !os.IsExist(err) {
		return fmt.Errorf("'%s': %w", dir, err)
	}
	c.made[dir] = true
	return nil
}

func (c *copier) copyFile(rel, source, target string, mode fs.FileMode) error {
	if !c.copy {
		if err := c.link(source, target); err == nil {
			return nil
		}
		c.copy = true
	}
	in, err := os.Open(source)
	if err != nil {
		return fmt.Errorf("'%s': %w", rel, err)
	}
	defer in.Close()
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm()|0o600)
	if err != nil {
		return fmt.Errorf("'%s': %w", rel, err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("'%s': %w", rel, err)
	}
	return nil
}

// copySymlink re-creates an in-root symlink as a relative symlink pointing
// at the same (fully resolved) place in the copy. Keeping symlinks, rather
// than copying their targets, avoids duplicating trees and cycles, and
// keeps kustomize's own symlink handling as in the checkout. A symlink
// leaving the root (or dangling, or into .git) points where it did: the
// confined readers of a build refuse it, naming it, if it is ever read.
func (c *copier) copySymlink(rel, source, target string) error {
	dest, err := os.Readlink(source)
	if err != nil {
		return fmt.Errorf("'%s': %w", rel, err)
	}
	to := ""
	if resolved, err := filepath.EvalSymlinks(source); err == nil {
		if r, ok := paths.Within(c.src, resolved); ok && !inGitDir(r) {
			to = r
		}
	}
	if to == "" {
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(source), dest)
		}
		return os.Symlink(dest, target)
	}
	relLink, err := filepath.Rel(filepath.Dir(rel), to)
	if err != nil {
		return fmt.Errorf("'%s': %w", rel, err)
	}
	if err := os.Symlink(relLink, target); err != nil {
		return fmt.Errorf("'%s': %w", rel, err)
	}
	return nil
}

func inGitDir(rel string) bool {
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == ".git" {
			return true
		}
	}
	return false
}

func describe(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "named pipe"
	case mode&fs.ModeSocket != 0:
		return "socket"
	case mode&fs.ModeCharDevice != 0:
		return "character device"
	case mode&fs.ModeDevice != 0:
		return "device"
	default:
		return "irregular file (" + mode.Type().String() + ")"
	}
}
