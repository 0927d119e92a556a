package build

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// confinedFS is kustomize's on-disk file system restricted to a set of
// directories. Every path is resolved through symlinks before it is checked,
// so a symlink in the repository cannot make kustomize read (or the
// generator write) anything outside the root. It plays the part of Flux's
// secure file system, which is not a dependency of this module.
type confinedFS struct {
	disk  filesys.FileSystem
	dirs  []string // resolved absolute directories that may be accessed
	clone string   // resolved temp dir whose kustomize-* children hold git clones; "" forbids them
	// seen records what the build reads below the root (its inputs).
	seen *recorder
}

var _ filesys.FileSystem = (*confinedFS)(nil)

// outsideRootError reports a path that resolves outside every allowed directory.
type outsideRootError struct {
	Path     string // as asked for
	Resolved string // after following symlinks
	Root     string
}

// Error names the path relative to the root, as the repository has it:
// the root itself is a scratch copy the user never sees.
func (e *outsideRootError) Error() string {
	path := e.Path
	if rel, err := filepath.Rel(e.Root, e.Path); err == nil && filepath.IsAbs(e.Path) {
		path = filepath.ToSlash(rel)
	}
	if e.Path == e.Resolved {
		return fmt.Sprintf("%s is outside the root of the repository", path)
	}
	return fmt.Sprintf("%s resolves to %s, outside the root of the repository (symlinks must not leave it)", path, e.Resolved)
}

// newConfinedFS confines access to root, which must be resolved already.
// allowClones lets kustomize use the temporary directories it clones
// remote bases into.
func newConfinedFS(root string, allowClones bool) (*confinedFS, error) {
	c := &confinedFS{disk: filesys.MakeFsOnDisk(), dirs: []string{root}, seen: newRecorder(root)}
	if allowClones {
		tmp, err := filepath.EvalSymlinks(os.TempDir())
		if err != nil {
			return nil, fmt.Errorf("resolving the temporary directory: %w", err)
		}
		c.clone = tmp
	}
	return c, nil
}

// allow adds a resolved directory, e.g. the wrapper kustomization's.
func (c *confinedFS) allow(dir string) { c.dirs = append(c.dirs, dir) }

// check returns an error unless path, with symlinks followed, lies in an
// allowed directory.
func (c *confinedFS) check(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	resolved, err := resolve(abs)
	if err != nil {
		return err
	}
	for _, d := range c.dirs {
		if within(d, resolved) {
			return nil
		}
	}
	if c.clone != "" && within(c.clone, resolved) {
		rel, _ := filepath.Rel(c.clone, resolved)
		if strings.HasPrefix(rel, "kustomize-") {
			c.seen.incomplete()
			return nil
		}
	}
	return &outsideRootError{Path: path, Resolved: resolved, Root: c.dirs[0]}
}

// resolve follows symlinks in abs. For a path that does not exist yet, the
// longest existing prefix is resolved, so creating a file below a symlinked
// directory is judged by where it would really land.
func resolve(abs string) (string, error) {
	p, rest := abs, ""
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(p); lerr == nil {
			// p exists but cannot be resolved: a dangling symlink, whose
			// target we cannot judge.
			return "", fmt.Errorf("%s is a dangling symlink", p)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

func (c *confinedFS) Create(path string) (filesys.File, error) {
	if err := c.check(path); err != nil {
		return nil, err
	}
	return c.disk.Create(path)
}

func (c *confinedFS) Mkdir(path string) error {
	if err := c.check(path); err != nil {
		return err
	}
	return c.disk.Mkdir(path)
}

func (c *confinedFS) MkdirAll(path string) error {
	if err := c.check(path); err != nil {
		return err
	}
	return c.disk.MkdirAll(path)
}

func (c *confinedFS) RemoveAll(path string) error {
	if err := c.check(path); err != nil {
		return err
	}
	return c.disk.RemoveAll(path)
}

func (c *confinedFS) Open(path string) (filesys.File, error) {
	if err := c.check(path); err != nil {
		return nil, err
	}
	f, err := c.disk.Open(path)
	c.read(path, err)
	return f, err
}

// read records path as an input when reading it succeeded or found
// nothing (a missing file is an input too: creating it changes the
// build); reading a directory as a file, which kustomize tries before
// loading it as a kustomization, is not.
func (c *confinedFS) read(path string, err error) {
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		c.seen.file(path)
	}
}

// IsDir, Exists and CleanedAbs answer from the entries of path's parent,
// which is therefore an input.
func (c *confinedFS) IsDir(path string) bool {
	c.seen.dir(filepath.Dir(path))
	return c.check(path) == nil && c.disk.IsDir(path)
}

func (c *confinedFS) ReadDir(path string) ([]string, error) {
	if err := c.check(path); err != nil {
		return nil, err
	}
	c.seen.dir(path)
	return c.disk.ReadDir(path)
}

// CleanedAbs is what kustomize's loaders and load restrictor use to find
// directories and files, so confining it confines kustomize.
func (c *confinedFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if err := c.check(path); err != nil {
		return "", "", err
	}
	c.seen.dir(filepath.Dir(path))
	return c.disk.CleanedAbs(path)
}

func (c *confinedFS) Exists(path string) bool {
	c.seen.dir(filepath.Dir(path))
	return c.check(path) == nil && c.disk.Exists(path)
}

// Glob's answer depends on directories the pattern names with wildcards,
// which no list of inputs pins down: a build that globs is not recorded
// as complete.
func (c *confinedFS) Glob(pattern string) ([]string, error) {
	c.seen.incomplete()
	paths, err := c.disk.Glob(pattern)
	if err != nil {
		return nil, err
	}
	var kept []string
	for _, p := range paths {
		if c.check(p) == nil {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

func (c *confinedFS) ReadFile(path string) ([]byte, error) {
	if err := c.check(path); err != nil {
		return nil, err
	}
	data, err := c.disk.ReadFile(path)
	c.read(path, err)
	return data, err
}

// WriteFile replaces path: in a workspace an existing file may be a hard
// link to the user's checkout (see package workspace).
func (c *confinedFS) WriteFile(path string, data []byte) error {
	if err := c.check(path); err != nil {
		return err
	}
	return workspace.WriteFile(path, data, 0o644)
}

// Walk stops with an error at the first entry that resolves outside the
// allowed directories instead of silently skipping it.
func (c *confinedFS) Walk(path string, walkFn filepath.WalkFunc) error {
	return c.disk.Walk(path, func(p string, info os.FileInfo, err error) error {
		if cerr := c.check(p); cerr != nil {
			return cerr
		}
		if info != nil && info.IsDir() {
			c.seen.dir(p)
		}
		return walkFn(p, info, err)
	})
}
