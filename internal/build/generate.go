package build

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"sigs.k8s.io/kustomize/api/konfig"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// kustomizationFile returns the kustomization file in dir, or "" if dir
// has none. A kustomization symlinked from outside the root is an error
// rather than "none", which would send kustomize looking for the wrong thing.
func kustomizationFile(fsys *confinedFS, dir string) (string, error) {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := fsys.check(p); err != nil {
			return "", err
		}
		if !fsys.IsDir(p) {
			return p, nil
		}
	}
	return "", nil
}

// generateKustomization writes dir/kustomization.yaml listing every
// manifest below dir, as Flux does for a path without a kustomization, and
// reports whether it did. Hidden files and directories are skipped, as are
// YAML files without apiVersion and kind; a subdirectory with its own
// kustomization is listed as one resource and not descended into. Entries
// follow filepath.Walk's lexical order, so the result is deterministic.
func generateKustomization(fsys *confinedFS, root, dir string) (bool, error) {
	if kfile, err := kustomizationFile(fsys, dir); err != nil || kfile != "" {
		return false, err
	}
	var resources []string
	// Walk the disk directly: listing names reads nothing, and a symlink
	// that leaves the root is refused by ReadFile only if it is a YAML file
	// we would include, not for an unrelated README link.
	err := fsys.disk.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if path == dir {
			return nil
		}
		if strings.HasPrefix(info.Name(), ".") {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if info.IsDir() {
			kfile, err := kustomizationFile(fsys, path)
			if err != nil {
				return err
			}
			if kfile != "" {
				resources = append(resources, filepath.ToSlash(rel))
				return filepath.SkipDir
			}
			return nil
		}
		if ext := strings.ToLower(filepath.Ext(path)); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		data, err := fsys.ReadFile(path)
		if err != nil {
			return err
		}
		ok, err := isManifest(data)
		if err != nil {
			// Like Flux: a broken YAML file is a mistake to report, not to skip.
			return fmt.Errorf("%s: invalid YAML: %w", relTo(root, path), err)
		}
		if ok {
			resources = append(resources, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("generating a kustomization for %s: %w", describe(root, dir), err)
	}
	k := kustypes.Kustomization{
		TypeMeta:  kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
		Resources: resources,
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return false, err
	}
	kfile := filepath.Join(dir, konfig.DefaultKustomizationFileName())
	if err := fsys.WriteFile(kfile, data); err != nil {
		return false, fmt.Errorf("generating a kustomization for %s: %w", describe(root, dir), err)
	}
	return true, nil
}

// relTo returns path relative to root with forward slashes, for messages
// and sources; path itself if it is not below root.
func relTo(root, path string) string {
	rel, ok := paths.Within(root, path)
	if !ok {
		return path
	}
	return filepath.ToSlash(rel)
}

// describe names a directory below root for messages.
func describe(root, dir string) string {
	if rel := relTo(root, dir); rel != "." {
		return rel
	}
	return "the repository root"
}
