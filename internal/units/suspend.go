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
	if c.Base.Base == "" || c.Base.At == nil {
		return nil
	}
	dir, file := path, ""
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		dir, file = filepath.Dir(path), filepath.Base(path)
	}
	head, err := paths.Resolve(dir, c.Root)
	if err != nil {
		return err
	}
	at, err := c.Base.At(ctx, c.Base.Base, head)
	if err != nil || at == nil {
		return err // a configuration new in the PR: nothing to compare
	}
	basePath := at.Path
	if file != "" {
		basePath = filepath.Join(basePath, file)
	}
	base, _, err := Load(basePath, at.Root)
	if errors.As(err, new(*EmptyError)) {
		return nil // no unit at the base: nothing flips
	}
	if err != nil {
		return fmt.Errorf("the configuration at the PR base %s: %w", checkout.Short(c.Base.Base), err)
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

// suspended says, of each unit of s, whether its spec.suspend is set.
func suspended(s *config.Set) map[string]bool {
	out := make(map[string]bool, len(s.Units))
	for _, u := range s.Units {
		out[u.Name] = u.Suspend
	}
	return out
}
