package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// Rendered is a unit's desired state: decrypted, substituted objects and the
// files they came from.
type Rendered struct {
	Objects []*unstructured.Unstructured
	Sources map[object.ID]string
	// Inputs are what the build read below the repository root.
	Inputs build.Inputs
}

// Render builds the unit without touching any cluster: a scratch copy of the
// root is made (the checkout is never written), secretGenerator files are
// decrypted in it, kustomize builds, encrypted manifests are decrypted and
// variables substituted. Secret values are handed to opts.Mask first.
func Render(ctx context.Context, opts Options) (*Rendered, error) {
	path, root, err := resolvePaths(opts.Path, opts.Root)
	if err != nil {
		return nil, err
	}
	ws, err := workspace.Copy(ctx, root, workspace.Options{})
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil, err
	}
	scratchPath, err := ws.Join(rel)
	if err != nil {
		return nil, err
	}

	dec, err := decrypt.New(decrypt.Options{AgeIdentities: opts.AgeIdentities, AWSKMS: opts.AWSKMS})
	if err != nil {
		return nil, err
	}
	if err := dec.DecryptFiles(ctx, ws.Root, scratchPath); err != nil {
		return nil, err
	}
	bo := opts.Build
	bo.Root, bo.Path = ws.Root, scratchPath
	built, err := build.Build(ctx, bo)
	if err != nil {
		return nil, err
	}
	if err := dec.DecryptObjects(ctx, built.Objects, built.Sources); err != nil {
		return nil, err
	}
	if opts.Mask != nil {
		opts.Mask(decrypt.SecretValues(built.Objects))
	}
	if err := build.Substitute(built.Objects, opts.Substitute, built.Sources); err != nil {
		return nil, err
	}
	if opts.Mask != nil { // substitution may have put values into Secrets
		opts.Mask(decrypt.SecretValues(built.Objects))
	}
	return &Rendered{Objects: built.Objects, Sources: built.Sources, Inputs: built.Inputs}, nil
}

// resolvePaths makes path absolute and finds the root confining the build:
// the given root, else the enclosing git work tree, else path itself.
func resolvePaths(path, root string) (string, string, error) {
	if path == "" {
		return "", "", fmt.Errorf("a path to build is required (--path)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return "", "", fmt.Errorf("path %s is not a directory", path)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", "", err
	}
	if root != "" {
		if root, err = filepath.Abs(root); err != nil {
			return "", "", err
		}
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return "", "", err
		}
		if _, ok := paths.Within(root, abs); !ok {
			return "", "", fmt.Errorf("path %s is outside the root %s", path, root)
		}
		return abs, root, nil
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return abs, d, nil
		}
		if filepath.Dir(d) == d {
			return abs, abs, nil
		}
	}
}
