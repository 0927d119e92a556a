package units

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// markSuspensions records, on the results of a three-way diff (c.Base's
// Base and At set), which units merging suspends or resumes: their
// spec.suspend differs between the configuration at the pull request's
// base and here. path is the configuration as given (a file or a
// directory). A unit new in the PR, or one it removes, flips nothing.
func (c Config) markSuspensions(ctx context.Context, path string, set *result.Set) error {
	base, _, err := c.atBase(ctx, path)
	if err != nil || base == nil {
		return err
	}
	was, now := suspended(base), suspended(c.Set)
	for _, r := range set.Units {
		before, inBase := was[r.Unit]
		after, inHead := now[r.Unit]
		switch {
		case !inBase || !inHead || before == after:
		case after:
			r.Suspension = result.Suspends
		default:
			r.Suspension = result.Resumes
		}
	}
	return nil
}

// atBase reads the configuration at path (as given: a file or a
// directory) at c.Base.Base, checked out with c.Base.At, and returns it
// with the root of that checkout. Nil, without an error, when there is
// no base, or the configuration is not there or holds no unit.
func (c Config) atBase(ctx context.Context, path string) (*config.Set, string, error) {
	if c.Base.Base == "" || c.Base.At == nil {
		return nil, "", nil
	}
	dir, file := path, ""
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		dir, file = filepath.Dir(path), filepath.Base(path)
	}
	head, err := paths.Resolve(dir, c.Root)
	if err != nil {
		return nil, "", err
	}
	at, err := c.Base.At(ctx, c.Base.Base, head)
	if err != nil || at == nil {
		return nil, "", err // a configuration new in the PR: nothing to compare
	}
	basePath := at.Path
	if file != "" {
		basePath = filepath.Join(basePath, file)
	}
	base, _, err := Load(basePath, at.Root)
	if errors.As(err, new(*EmptyError)) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("the configuration at the PR base %s: %w", checkout.Short(c.Base.Base), err)
	}
	return base, at.Root, nil
}

// suspended says, of each unit of s, whether its spec.suspend is set.
func suspended(s *config.Set) map[string]bool {
	out := make(map[string]bool, len(s.Units))
	for _, u := range s.Units {
		out[u.Name] = u.Suspend
	}
	return out
}
