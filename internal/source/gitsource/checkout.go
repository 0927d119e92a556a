package gitsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// maxLinkBytes bounds a symbolic link's target, as a file system does.
const maxLinkBytes = 4096

// checkout writes commit c's tree into dir, which must exist, through an
// os.Root of dir, within lim and ctx: every entry is counted before it is
// written, every file's size read from its object's header before a byte
// of it is, and ctx is checked between entries and while a file is
// copied. go-git's own checkout takes no context and no limit (a tree
// referenced ten times per level grows it without end), so the tree is
// walked here. Links are written as they are (the build confines what
// it reads to the tree); submodules are empty directories, as Git leaves
// them without --recurse-submodules.
func checkout(ctx context.Context, store *filesystem.Storage, c *object.Commit, dir string, lim Limits) error {
	tree, err := c.Tree()
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	var entries int
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w (after %d entries)", err, entries)
		}
		name, e, err := walker.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if entries++; entries > lim.Files {
			return &LimitError{Limit: "files", Max: int64(lim.Files), Path: name}
		}
		switch e.Mode {
		case filemode.Dir, filemode.Submodule:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case filemode.Regular, filemode.Deprecated, filemode.Executable, filemode.Symlink:
			size, err := store.EncodedObjectSize(e.Hash)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if size > lim.FileBytes || (e.Mode == filemode.Symlink && size > maxLinkBytes) {
				return &LimitError{Limit: "file bytes", Max: lim.FileBytes, Path: name}
			}
			if total += size; total > lim.Bytes {
				return &LimitError{Limit: "bytes", Max: lim.Bytes, Path: name}
			}
			if err := writeEntry(ctx, store, root, name, e, size); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		default:
			return fmt.Errorf("%s: entry of mode %s is not checked out", name, e.Mode)
		}
	}
}

// writeEntry writes the blob of e (size bytes) as name: a file, or a
// link.
func writeEntry(ctx context.Context, store *filesystem.Storage, root *os.Root, name string, e object.TreeEntry, size int64) error {
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	blob, err := object.GetBlob(store, e.Hash)
	if err != nil {
		return err
	}
	r, err := blob.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	// The object's header said size: never read more.
	src := io.LimitReader(&ctxReader{ctx: ctx, r: r}, size)
	if e.Mode == filemode.Symlink {
		target, err := io.ReadAll(src)
		if err != nil {
			return err
		}
		return root.Symlink(string(target), name)
	}
	mode := os.FileMode(0o644)
	if e.Mode == filemode.Executable {
		mode = 0o755
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ctxReader ends a read once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
