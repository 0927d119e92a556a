package source

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

// AtFunc checks out a unit's directory head at a revision (see
// Spec.At): nil when the unit does not exist there.
type AtFunc func(ctx context.Context, rev string, head paths.Dir) (*paths.Dir, error)

// Generated is an artifact an ArtifactGenerator makes from this checkout
// alone (every source of the generator resolved to it, none mapped or
// fetched): it can be made again at another revision of the checkout.
type Generated struct {
	gen *config.Generator
	art *config.Artifact
}

// artifactAt is at for a unit built inside artifact g: the checkout at
// rev (with at), g's copy operations performed from it into the scratch
// tree (once per revision), and the unit's directory (head.Rel) in that.
// So a pull request's diff of a unit of Flux 2.7's layout compares the
// unit with itself at the base, as the pre-2.7 layout's unit does, rather
// than showing everything created. The copy operations are head's, as the
// unit's other settings are. An artifact whose sources are missing at rev
// (the generator copies a directory the base did not have) does not
// exist there: everything is new.
func (r *Resolver) ArtifactAt(at AtFunc, g *Generated) AtFunc {
	return func(ctx context.Context, rev string, head paths.Dir) (*paths.Dir, error) {
		root, err := at(ctx, rev, paths.Dir{Root: r.root, Path: r.root, Rel: "."})
		if err != nil || root == nil {
			return nil, err
		}
		dest, err := r.generateAt(ctx, rev, root.Path, g)
		if err != nil || dest == "" {
			return nil, err
		}
		dir, err := paths.Resolve(filepath.Join(dest, filepath.FromSlash(head.Rel)), dest)
		if errors.Is(err, paths.ErrNotDir) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &dir, nil
	}
}

// generateAt makes artifact g from root, the checkout at rev, in the
// scratch tree, once: "" when its copy operations fail there.
func (r *Resolver) generateAt(ctx context.Context, rev, root string, g *Generated) (string, error) {
	r.artMu.Lock()
	defer r.artMu.Unlock()
	key := baseArtifact{rev: rev, gen: g.gen.Ref, art: g.art.Name}
	if dest, ok := r.baseArtifacts[key]; ok {
		return dest, nil
	}
	if err := r.makeScratch(); err != nil {
		return "", err
	}
	// One path segment, "@" keeping it apart from the head's artifacts
	// (namespace/name): no namespace holds one.
	dest := filepath.Join(r.scratch, "@"+url.PathEscape(rev), g.gen.Ref.Namespace, g.gen.Ref.Name, g.art.Name)
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	roots := map[string]string{}
	for _, s := range g.gen.Sources {
		roots[s.Alias] = root
	}
	if err := copyArtifact(ctx, g.art.Copy, roots, dest); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		dest = "" // not made at rev: nothing to compare with
	}
	if r.baseArtifacts == nil {
		r.baseArtifacts = map[baseArtifact]string{}
	}
	r.baseArtifacts[key] = dest
	return dest, nil
}

// baseArtifact names an artifact made at a revision.
type baseArtifact struct {
	rev string
	gen config.Ref
	art string
}
