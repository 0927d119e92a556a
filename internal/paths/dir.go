package paths

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Dir is a unit's directory, resolved once where it enters the program
// (a flag, an Action input) and passed down as it is: every step that
// needs the unit's path or its repository takes these values instead of
// resolving a path of its own.
type Dir struct {
	// Root confines every file the build reads: absolute, symlinks
	// evaluated.
	Root string
	// Path is the directory to build: absolute, symlinks evaluated,
	// inside Root.
	Path string
	// Rel is Path relative to Root, slash-separated; "." for Root itself.
	Rel string
}

// Problems with a path, wrapped in *Error.
var (
	ErrRequired    = errors.New("is required")
	ErrNotDir      = errors.New("is not a directory")
	ErrOutsideRoot = errors.New("is outside the root")
)

// Error is a path that cannot be used. Which says which one ("path" or
// "root"), so the caller can name its own flag or input for it.
type Error struct {
	Which string // "path" or "root"
	Path  string // as given
	Root  string // the root it had to stay inside, for ErrOutsideRoot
	Err   error
}

func (e *Error) Error() string {
	switch {
	case errors.Is(e.Err, ErrRequired):
		return fmt.Sprintf("a %s %v", e.Which, e.Err)
	case errors.Is(e.Err, ErrOutsideRoot):
		return fmt.Sprintf("%s %s %v %s", e.Which, e.Path, e.Err, e.Root)
	}
	return fmt.Sprintf("%s %s %v", e.Which, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Resolve makes path a Dir. root confines the build; empty means the
// enclosing git work tree (the nearest directory above path holding .git),
// else path itself. Both must be directories, and path must lie inside
// root once symlinks are evaluated.
func Resolve(path, root string) (Dir, error) {
	if path == "" {
		return Dir{}, &Error{Which: "path", Err: ErrRequired}
	}
	abs, err := realDir("path", path)
	if err != nil {
		return Dir{}, err
	}
	if root == "" {
		root = gitRoot(abs)
	} else if root, err = realDir("root", root); err != nil {
		return Dir{}, err
	}
	rel, ok := Within(root, abs)
	if !ok {
		return Dir{}, &Error{Which: "path", Path: path, Root: root, Err: ErrOutsideRoot}
	}
	return Dir{Root: root, Path: abs, Rel: filepath.ToSlash(rel)}, nil
}

// realDir returns p absolute with symlinks evaluated, if it is a directory.
func realDir(which, p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			err = ErrNotDir
		}
		return "", &Error{Which: which, Path: p, Err: err}
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return "", &Error{Which: which, Path: p, Err: ErrNotDir}
	}
	return abs, nil
}

// gitRoot is the nearest directory at or above dir that holds .git (a
// directory, or a file in a worktree or submodule), else dir.
func gitRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// Join returns the same unit inside another copy of its root (a scratch
// copy, or a worktree of another commit): root must be resolved already.
func (d Dir) Join(root string) Dir {
	return Dir{Root: root, Path: filepath.Join(root, filepath.FromSlash(d.Rel)), Rel: d.Rel}
}
