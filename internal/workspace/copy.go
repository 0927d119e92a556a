package workspace

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

// copier copies the tree at src (absolute, symlinks resolved) into dst.
type copier struct {
	ctx   context.Context
	src   string
	dst   string
	opts  Options
	files int
	bytes int64
	// copy is set once a hard link failed (another filesystem, say):
	// from then on files are copied.
	copy bool
}

func (c *copier) copyTree() error {
	return filepath.WalkDir(c.src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("'%s': %w", c.rel(path), err)
		}
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if path == c.src {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a .git file (worktree, submodule) is skipped as well
		}
		rel := c.rel(path)
		c.files++
		if c.files > c.opts.MaxFiles {
			return fmt.Errorf("'%s': repository has more than %d entries: %w", rel, c.opts.MaxFiles, ErrTooManyFiles)
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("'%s': %w", rel, err)
		}
		target := filepath.Join(c.dst, rel)
		switch mode := info.Mode(); {
		case mode.IsDir():
			if err := os.Mkdir(target, mode.Perm()|0o700); err != nil {
				return fmt.Errorf("'%s': %w", rel, err)
			}
			return nil
		case mode.IsRegular():
			return c.copyFile(rel, path, target, info)
		case mode&fs.ModeSymlink != 0:
			return c.copySymlink(rel, path, target)
		default:
			return fmt.Errorf("'%s' is a %s; only regular files, directories and symlinks are supported: %w",
				rel, describe(mode), ErrUnsupportedFile)
		}
	})
}

// link is os.Link; tests replace it to take the copying path.
var link = os.Link

func (c *copier) copyFile(rel, path, target string, info fs.FileInfo) error {
	// Check before reading so a huge file fails fast.
	if c.bytes+info.Size() > c.opts.MaxBytes {
		return fmt.Errorf("'%s': repository exceeds %d bytes: %w", rel, c.opts.MaxBytes, ErrTooLarge)
	}
	if !c.copy {
		if err := link(path, target); err == nil {
			c.bytes += info.Size()
			return nil
		}
		c.copy = true
	}
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("'%s': %w", rel, err)
	}
	defer in.Close()
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm()|0o600)
	if err != nil {
		return fmt.Errorf("'%s': %w", rel, err)
	}
	// Read at most one byte past the budget: a file that grew since Lstat
	// still cannot blow the cap.
	budget := c.opts.MaxBytes - c.bytes
	n, err := io.Copy(out, io.LimitReader(in, budget+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("'%s': %w", rel, err)
	}
	c.bytes += n
	if n > budget {
		return fmt.Errorf("'%s': repository exceeds %d bytes: %w", rel, c.opts.MaxBytes, ErrTooLarge)
	}
	return nil
}

// copySymlink re-creates an in-root symlink as a relative symlink pointing at
// the same (fully resolved) place in the copy. Keeping symlinks, rather than
// copying their targets, avoids duplicating trees and cycles, and keeps
// kustomize's own symlink load restrictions behaving as in the checkout.
func (c *copier) copySymlink(rel, path, target string) error {
	link, _ := os.Readlink(path)
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("'%s': symlink to '%s' cannot be resolved (%v): %w", rel, link, err, ErrUnsupportedFile)
	}
	to, ok := paths.Within(c.src, resolved)
	if !ok {
		return fmt.Errorf("'%s': symlink to '%s' resolves %w", rel, link, ErrOutsideRoot)
	}
	if inGitDir(to) {
		return fmt.Errorf("'%s': symlink to '%s' points into .git, which is not copied: %w", rel, link, ErrUnsupportedFile)
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

func (c *copier) rel(path string) string {
	r, err := filepath.Rel(c.src, path)
	if err != nil {
		return path
	}
	return r
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
