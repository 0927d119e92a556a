package source

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
)

// discovered finds the ExternalArtifact key among those the
// ArtifactGenerators of its namespace with a spec.pathPattern make, as
// source-watcher does: the pattern's source is resolved (as the
// generator's copies read it) and walked, and each directory it matches
// makes one artifact of each template. It returns nil when none makes it;
// an error when a pattern's source does not resolve or a directory makes
// a bad artifact. Called with r.artMu held.
func (r *Resolver) discovered(ctx context.Context, u *config.Unit, key config.Ref) (*config.Generator, *config.Artifact, error) {
	for _, gen := range r.set.Generators {
		if gen.PathPattern == nil || gen.Ref.Namespace != key.Namespace {
			continue
		}
		where := fmt.Sprintf("ArtifactGenerator %s (%s:%d)", gen.Ref, gen.File, gen.Line)
		var root string
		for _, s := range gen.Sources {
			if s.Alias != gen.PathPattern.Alias {
				continue
			}
			src, err := r.generatorSource(ctx, u, gen, s)
			if err != nil {
				return nil, nil, err
			}
			root = src.Root
		}
		arts, err := expandPattern(ctx, gen, root)
		if err != nil {
			return nil, nil, &Error{Source: config.SourceRef{Kind: config.ExternalArtifactKind, Namespace: key.Namespace, Name: key.Name},
				Why: fmt.Sprintf("%s: %v", where, err)}
		}
		for i := range arts {
			if arts[i].Name == key.Name {
				return gen, &arts[i], nil
			}
		}
	}
	return nil, nil, nil
}

// expandPattern is gen's artifacts for each directory below root (its
// pathPattern's source) the pattern matches, in the walk's order. Two
// directories may not make artifacts of one name (a case apart, once
// lower-cased). Symbolic links are not followed.
func expandPattern(ctx context.Context, gen *config.Generator, root string) ([]config.Artifact, error) {
	var out []config.Artifact
	seen := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.IsDir() || path == root {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		captures := gen.PathPattern.Match(rel)
		if captures == nil {
			return nil
		}
		arts, err := gen.ArtifactsFor(captures)
		if err != nil {
			return fmt.Errorf("directory %s: %w", rel, err)
		}
		for _, a := range arts {
			if prev, ok := seen[a.Name]; ok {
				return fmt.Errorf("pathPattern %q: directories %s and %s both make artifact %s", gen.PathPattern.Text, prev, rel, a.Name)
			}
			seen[a.Name] = rel
		}
		out = append(out, arts...)
		return nil
	})
	return out, err
}
