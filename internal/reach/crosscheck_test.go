package reach_test

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/reach"
	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// trees are the repository's directories of kustomizations: each is
// copied whole, so that a kustomization's "../" paths stay inside.
var trees = []string{
	"examples",
	"testdata",
	"cmd/kustomize-deploy/testdata",
	"internal/build/testdata",
	"internal/config/testdata",
	"internal/decrypt/testdata",
	"internal/units/testdata",
	"internal/pipeline/testdata",
}

// The static read set cannot miss a file kustomize reads: every build of
// every directory of the repository's fixtures and examples that has a
// kustomization (or manifests, built as Flux builds a plain directory)
// is made with kustomize's file system recording what it read (see
// build.Inputs), and each file read must be in the read set; each
// directory whose entries were looked at must be in it, or hold part of
// it (kustomize probes a path's parent to find it).
func TestStaticCoversEveryRead(t *testing.T) {
	t.Parallel()
	checked, unknown := 0, 0
	for _, tree := range trees {
		src := filepath.Join("..", "..", filepath.FromSlash(tree))
		if _, err := os.Stat(src); err != nil {
			continue
		}
		pristine := copyTree(t, src)
		snap, err := workspace.List(context.Background(), pristine, workspace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range buildable(t, pristine) {
			rs := reach.Static(pristine, dir, nil)
			// A build writes in its root (a generated kustomization):
			// each one gets a scratch copy, as a unit's build does.
			ws, err := snap.Copy(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			root := ws.Root
			t.Cleanup(func() { ws.Close() })
			built, err := build.Build(context.Background(), build.Options{Root: root, Path: filepath.Join(root, filepath.FromSlash(dir))})
			if err != nil {
				continue // a fixture that fails on purpose reads no set to compare
			}
			if rs.Unknown != "" {
				unknown++
				continue
			}
			checked++
			for _, f := range built.Inputs.Files {
				if !rs.Covers(f) {
					t.Errorf("%s/%s: the build read %s, which the read set %v misses", tree, dir, f, rs.Roots)
				}
			}
			for _, d := range built.Inputs.Dirs {
				if !rs.Covers(d) && !slices.ContainsFunc(rs.Roots, func(r string) bool { return d == "." || strings.HasPrefix(r, d+"/") }) {
					t.Errorf("%s/%s: the build listed %s, which the read set %v neither covers nor holds part of", tree, dir, d, rs.Roots)
				}
			}
		}
	}
	t.Logf("%d builds checked, %d with a read set not known (rendered whatever changes)", checked, unknown)
	if checked < 50 {
		t.Errorf("only %d builds checked: the fixtures moved?", checked)
	}
}

// buildable are the directories below root holding a kustomization, and
// the plain directories (manifests, no kustomization) at its top, relative
// to it.
func buildable(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		switch ext := path.Ext(d.Name()); {
		case slices.Contains([]string{"kustomization.yaml", "kustomization.yml", "Kustomization"}, d.Name()):
		case (ext == ".yaml" || ext == ".yml") && strings.Count(rel, "/") <= 1:
		default:
			return nil
		}
		if !seen[rel] {
			seen[rel] = true
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// copyTree copies src (symlinks as symlinks) to a new directory and
// returns it, symlinks evaluated.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
