package units

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

// PathError is a configuration path that is not a file or directory of
// the repository.
type PathError struct{ Err error }

func (e *PathError) Error() string { return e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

// Load reads the configuration at path (a file or a directory) in the
// repository around it, or in root when set, and returns it with its
// directory. A bad path is a *PathError; a configuration with problems
// lists every one of them, one per line.
func Load(path, root string) (*config.Set, paths.Dir, error) {
	dir := path
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		dir = filepath.Dir(path)
	}
	d, err := paths.Resolve(dir, root)
	if err != nil {
		return nil, d, &PathError{Err: err}
	}
	target := d.Path
	if dir != path {
		target = filepath.Join(d.Path, filepath.Base(path))
	}
	set, err := config.Read(d.Root, target)
	if err != nil {
		return nil, d, explain(err)
	}
	return set, d, nil
}

// explain lists every problem config.Read found, one per line.
func explain(err error) error {
	problems := config.Problems(err)
	if len(problems) == 0 {
		return err
	}
	var lines []string
	for _, p := range problems {
		lines = append(lines, p.Error())
	}
	return errors.New(strings.Join(lines, "\n"))
}

// Remote is the repository's origin, without credentials or .git, to
// name a configuration (see ConfigID); "" without one. The CLI and the
// action (in actions/checkout's clone) find the same one.
func Remote(ctx context.Context, root string) string {
	url, err := checkout.Git(ctx, root, "config", "--get", "remote.origin.url")
	if err != nil {
		return ""
	}
	url = credentials.ReplaceAllString(url, "$1")
	return strings.TrimSuffix(url, ".git")
}

var credentials = regexp.MustCompile(`^([a-z]+://)[^@/]+@`)
