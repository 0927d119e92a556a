package decrypt

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

// errSymlinkOut is ErrOutsideRoot reached through a symlink.
var errSymlinkOut = fmt.Errorf("a symlink on the path leads %w", ErrOutsideRoot)

// fsRoot confines file access to a directory tree. The check is lexical
// first (no ".." out of the root) and then on the real path (no symlink out
// of the root), the same guarantees Flux gets from filepath-securejoin —
// except that an escape is an error here rather than being clamped.
type fsRoot struct {
	abs  string // as given, made absolute
	real string // abs with symlinks resolved
}

func newFSRoot(root string) (*fsRoot, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("root '%s': %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("root '%s': %w", root, err)
	}
	return &fsRoot{abs: abs, real: real}, nil
}

// rel turns p, relative to base (itself relative to the root) or absolute
// inside the root, into a clean path relative to the root.
func (r *fsRoot) rel(base, p string) (string, error) {
	if filepath.IsAbs(p) {
		for _, root := range []string{r.abs, r.real} {
			if rel, ok := paths.Within(root, p); ok {
				return rel, nil
			}
		}
		return "", fmt.Errorf("path leads %w", ErrOutsideRoot)
	}
	rel := filepath.Clean(filepath.Join(base, p))
	if paths.Escapes(rel) {
		return "", fmt.Errorf("path leads %w", ErrOutsideRoot)
	}
	return rel, nil
}

// resolve follows symlinks on rel and returns the real path relative to the
// root; it fails with ErrOutsideRoot if that leaves the root, and with an
// fs.ErrNotExist error if something on the way is missing.
func (r *fsRoot) resolve(rel string) (string, error) {
	real, err := filepath.EvalSymlinks(filepath.Join(r.real, rel))
	if err != nil {
		return "", err
	}
	out, ok := paths.Within(r.real, real)
	if !ok {
		return "", errSymlinkOut
	}
	return out, nil
}

// path returns the absolute path of rel.
func (r *fsRoot) path(rel string) string { return filepath.Join(r.real, rel) }

// lstat stats rel without following a final symlink.
func (r *fsRoot) lstat(rel string) (os.FileInfo, error) { return os.Lstat(r.path(rel)) }
