package units

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// EmptyError is a configuration that holds no Kustomization to run. It
// is refused, never run: an apply of it would garbage-collect every unit
// deployed from the configuration, and an empty one is a mistake (a
// wrong directory, or Kustomizations all of an API this tool refuses).
type EmptyError struct {
	// Path is the configuration, relative to the repository root.
	Path string
	// Set is what was read: its files.
	Set *config.Set
}

func (e *EmptyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "configuration %s holds no Flux Kustomization to run: refused, since applying it would garbage-collect every unit deployed from it", e.Path)
	if len(e.Set.Files) == 0 {
		b.WriteString(" (it holds no YAML file)")
	} else {
		fmt.Fprintf(&b, " (%d YAML file(s) read; Kustomizations are kustomize.toolkit.fluxcd.io/v1, v1beta2 or v1beta1)", len(e.Set.Files))
	}
	return b.String()
}

// Load reads the configuration at path (a file or a directory) in the
// repository around it, or in root when set, and returns it with its
// directory. A bad path is a *PathError; a configuration with problems
// lists every one of them, one per line; one with no unit to run is an
// *EmptyError.
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
	if len(set.Units) == 0 {
		rel, _ := filepath.Rel(d.Root, target)
		return nil, d, &EmptyError{Path: filepath.ToSlash(rel), Set: set}
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
	return checkout.Origin(ctx, root)
}
