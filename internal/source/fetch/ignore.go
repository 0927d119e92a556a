package fetch

// What is left out of a source's tree is what source-controller leaves
// out of its artifact (fluxcd/pkg sourceignore): the same rules for a
// GitRepository's checkout and an OCIRepository's extracted layer.

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// What source-controller leaves out of a Git artifact (fluxcd/pkg
// sourceignore): Git's own files always; the rest only when neither a
// .sourceignore file nor spec.ignore gives patterns of its own.
var (
	vcsPatterns     = []string{".git/", ".gitignore", ".gitmodules", ".gitattributes"}
	defaultPatterns = []string{
		"*.jpg", "*.jpeg", "*.gif", "*.png", "*.wmv", "*.flv", "*.tar.gz", "*.zip",
		".github/", ".circleci/", ".travis.yml", ".gitlab-ci.yml", "appveyor.yml", ".drone.yml", "cloudbuild.yaml", "codeship-services.yml", "codeship-steps.yml",
		"**/.goreleaser.yml", "**/.sops.yaml", "**/.flux.yaml",
	}
)

// IgnoreFile is the file of exclusion patterns a directory of a source
// may hold, as source-controller reads it.
const IgnoreFile = ".sourceignore"

// Exclude removes from the tree at dir what source-controller leaves out
// of a GitRepository's (or an extracted OCIRepository's) artifact: the
// patterns of every .sourceignore file (each for its own directory) and
// of ignore (spec.ignore, for the whole tree), else the default exclusions (images, archives, CI files); Git's
// own files always. A Kustomization built from the tree then sees the
// files Flux would.
func Exclude(dir string, ignore *string) error {
	var ps []gitignore.Pattern
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != IgnoreFile {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(p))
		if err != nil {
			return err
		}
		var domain []string
		if rel != "." {
			domain = strings.Split(filepath.ToSlash(rel), "/")
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ps = append(ps, readPatterns(string(data), domain)...)
		return nil
	})
	if err != nil {
		return err
	}
	if ignore != nil {
		ps = append(ps, readPatterns(*ignore, nil)...)
	}
	defaults := vcsPatterns
	if len(ps) == 0 {
		defaults = append(slices.Clone(vcsPatterns), defaultPatterns...)
	}
	ps = append(readPatterns(strings.Join(defaults, "\n"), nil), ps...)
	m := gitignore.NewMatcher(ps)
	var remove []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if m.Match(strings.Split(filepath.ToSlash(rel), "/"), d.IsDir()) {
			remove = append(remove, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range remove {
		errs = append(errs, os.RemoveAll(p))
	}
	return errors.Join(errs...)
}

// readPatterns reads gitignore lines, skipping blanks and comments.
func readPatterns(text string, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := strings.TrimRight(sc.Text(), " \t\r")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(l, domain))
	}
	return ps
}
