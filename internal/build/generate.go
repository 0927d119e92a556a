package build

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

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
// YAML files that are not manifests (see isManifest); a subdirectory with
// its own kustomization is listed as one resource and not descended into.
// Entries follow filepath.Walk's lexical order, so the result is
// deterministic. It returns what it listed, nil if dir has a kustomization
// of its own; a directory with nothing to list is an error.
func generateKustomization(fsys *confinedFS, root, dir string) (*generated, error) {
	if kfile, err := kustomizationFile(fsys, dir); err != nil || kfile != "" {
		return nil, err
	}
	g := &generated{dir: dir, filesOnly: true, checked: map[string]error{}}
	var skipped []string // YAML files that are not manifests
	// Walk the disk directly: listing names reads nothing, and a symlink
	// that leaves the root is refused by ReadFile only if it is a YAML file
	// we would include, not for an unrelated README link. The YAML files
	// are read and checked on every CPU once the walk has listed them,
	// then taken in the walk's order.
	var entries []walked
	err := fsys.disk.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			fsys.seen.dir(path)
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
				entries = append(entries, walked{rel: rel, path: path, dir: true})
				return filepath.SkipDir
			}
			return nil
		}
		if ext := strings.ToLower(filepath.Ext(path)); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		entries = append(entries, walked{rel: rel, path: path})
		return nil
	})
	// A file listed before the walk failed comes first, as it would have
	// stopped the walk.
	readWalked(fsys, root, entries)
	for _, e := range entries {
		if e.err != nil {
			err = e.err
			break
		}
		switch {
		case e.dir:
			g.resources = append(g.resources, filepath.ToSlash(e.rel))
			g.filesOnly = false
		case e.manifest:
			g.resources = append(g.resources, filepath.ToSlash(e.rel))
			g.checked[e.path] = e.checked
		default:
			skipped = append(skipped, relTo(root, e.path))
		}
	}
	if err == nil && len(g.resources) == 0 {
		// kustomize would say "kustomization.yaml is empty", of a file the
		// user never wrote.
		err = noManifests(skipped)
	}
	if err != nil {
		return nil, fmt.Errorf("generating a kustomization for %s: %w", describe(root, dir), err)
	}
	if err := g.write(fsys, g.resources); err != nil {
		return nil, fmt.Errorf("generating a kustomization for %s: %w", describe(root, dir), err)
	}
	return g, nil
}

// walked is an entry generateKustomization's walk lists: a directory
// with a kustomization, or a YAML file, and once read, what it holds.
type walked struct {
	rel, path string
	dir       bool
	// err is a file that could not be read or is not YAML; manifest says
	// it holds Kubernetes objects, and checked is checkManifestFile's
	// verdict on them.
	err      error
	manifest bool
	checked  error
}

// readWalked reads and checks the YAML files of entries, several at a
// time.
func readWalked(fsys *confinedFS, root string, entries []walked) {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range entries {
		e := &entries[i]
		if e.dir {
			continue
		}
		g.Go(func() error {
			data, err := fsys.ReadFile(e.path)
			if err != nil {
				e.err = err
				return nil
			}
			docs, err := decodeDocuments(data)
			if err != nil {
				// Like Flux: a broken YAML file is a mistake to report, not to skip.
				e.err = atFile(fmt.Errorf("%s: invalid YAML: %w", relTo(root, e.path), err), root, e.path, parseErrorLine(data))
				return nil
			}
			if e.manifest = isManifest(docs); e.manifest {
				e.checked = checkManifestFile(root, e.path, data, docs)
			}
			return nil
		})
	}
	_ = g.Wait()
}

// noManifests is the error for a directory without a kustomization in
// which no file is a manifest; skipped are the YAML files left out.
func noManifests(skipped []string) error {
	msg := "no Kubernetes manifests in it (YAML files whose documents have apiVersion and kind, or a directory with a kustomization)"
	if len(skipped) > 0 {
		msg += "; left out as not manifests: " + strings.Join(skipped, ", ")
	}
	return errors.New(msg)
}

// generated is a kustomization Build wrote for a plain directory.
type generated struct {
	dir       string
	resources []string
	// filesOnly: every resource is a manifest file, none a kustomization.
	filesOnly bool
	// checked holds checkManifest's verdict on each file listed, by path,
	// so the preflight need not read and parse them again.
	checked map[string]error
}

// write (re)writes the kustomization, listing resources.
func (g *generated) write(fsys *confinedFS, resources []string) error {
	k := kustypes.Kustomization{
		TypeMeta:  kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
		Resources: resources,
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	return fsys.WriteFile(filepath.Join(g.dir, konfig.DefaultKustomizationFileName()), data)
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
