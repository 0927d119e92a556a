package source

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// copyArtifact performs an ArtifactGenerator artifact's copy operations,
// in order, from the sources' roots (by alias) into dest, as Flux's
// source-watcher does (cp-like):
//   - "@alias/dir/**" copies dir's contents (its files and directories,
//     recursively); "@alias/dir/" or "@alias/dir" copies dir itself into
//     the destination; "@alias/dir/*.yaml" the matching files of dir;
//     "@alias/file" one file.
//   - a destination ending in "/" is a directory; otherwise a file is
//     copied to that name, unless a directory of that name exists.
//   - exclude patterns match paths relative to the source's root or to
//     the non-glob prefix of from ("**" for any directories); a pattern
//     without "/" matches a file name at any depth.
//   - later operations overwrite earlier ones' files; strategy Merge
//     merges a single YAML file into an existing one (maps merged
//     recursively, lists replaced, as Helm merges values files).
//
// Git metadata (.git) is never copied, as a GitRepository's artifact
// holds none. Nothing is read or written outside the roots.
func copyArtifact(ctx context.Context, ops []config.Copy, roots map[string]string, dest string) error {
	out, err := os.OpenRoot(dest)
	if err != nil {
		return err
	}
	defer out.Close()
	for _, op := range ops {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := copyOne(op, roots, out); err != nil {
			return fmt.Errorf("copy from %q to %q: %w", op.From, op.To, err)
		}
	}
	return nil
}

func copyOne(op config.Copy, roots map[string]string, out *os.Root) error {
	alias, pattern, ok := strings.Cut(strings.TrimPrefix(op.From, "@"), "/")
	if !ok || !strings.HasPrefix(op.From, "@") {
		return errors.New("the source must be @alias/path")
	}
	destRel, ok := strings.CutPrefix(op.To, "@artifact/")
	if !ok {
		return errors.New("the destination must be @artifact/path")
	}
	destRel = path.Clean("/" + destRel)[1:]
	if destRel == "" {
		destRel = "."
	}
	root, ok := roots[alias]
	if !ok {
		return fmt.Errorf("source alias %q not found", alias)
	}
	for _, ex := range op.Exclude {
		if _, err := path.Match(strings.ReplaceAll(ex, "**", "*"), "."); err != nil {
			return fmt.Errorf("invalid exclude pattern %q", ex)
		}
	}
	in, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer in.Close()
	src := in.FS()
	toDir := strings.HasSuffix(op.To, "/")
	if op.Strategy == config.StrategyExtract {
		return extractTarballs(src, pattern, alias, out, destRel, op.Exclude)
	}

	if !strings.ContainsAny(pattern, "*?[]") {
		p := path.Clean(pattern)
		info, err := fs.Stat(src, p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("source %q does not exist", p)
			}
			return err
		}
		if info.IsDir() {
			return copyTree(src, p, out, path.Join(destRel, path.Base(p)), op.Exclude, p)
		}
		if excluded(p, ".", op.Exclude) {
			return nil
		}
		target := destRel
		if toDir {
			target = path.Join(destRel, path.Base(p))
		} else if info, err := out.Stat(destRel); err == nil && info.IsDir() {
			target = path.Join(destRel, path.Base(p))
		}
		return copyFile(src, p, out, target, op.Strategy == config.StrategyMerge)
	}

	matches, err := fs.Glob(src, pattern)
	if err != nil {
		return fmt.Errorf("invalid glob pattern %q: %w", pattern, err)
	}
	if len(matches) == 0 {
		return fmt.Errorf("no files match pattern %q in source %s", pattern, alias)
	}
	base := selectionRoot(pattern)
	var kept []string
	for _, m := range matches {
		if m == "." || m == ".." || isGitDir(m) || excluded(m, base, op.Exclude) {
			continue
		}
		kept = append(kept, m)
	}
	if len(kept) == 0 {
		return fmt.Errorf("all files matching pattern %q in source %s were excluded", pattern, alias)
	}
	for _, m := range kept {
		target := path.Join(destRel, m)
		if prefix, ok := strings.CutSuffix(pattern, "/**"); ok {
			if rel, ok := strings.CutPrefix(m, prefix+"/"); ok {
				target = path.Join(destRel, rel)
			}
		}
		info, err := fs.Stat(src, m)
		if err != nil {
			return err
		}
		if info.IsDir() {
			err = copyTree(src, m, out, target, op.Exclude, base)
		} else {
			err = copyFile(src, m, out, target, op.Strategy == config.StrategyMerge)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// extractTarballs unpacks the tarballs (.tar.gz, .tgz) pattern matches
// in src into destRel of out, as the Extract strategy does (a chart
// archive of a HelmRepository or an OCI artifact, made a directory):
// through an os.Root, names climbing out refused, links left out, each
// at most ocisource.DefaultMaxSize.
func extractTarballs(src fs.FS, pattern, alias string, out *os.Root, destRel string, exclude []string) error {
	matches := []string{path.Clean(pattern)}
	if strings.ContainsAny(pattern, "*?[]") {
		var err error
		if matches, err = fs.Glob(src, pattern); err != nil {
			return fmt.Errorf("invalid glob pattern %q: %w", pattern, err)
		}
	}
	base := selectionRoot(pattern)
	n := 0
	for _, m := range matches {
		if excluded(m, base, exclude) {
			continue
		}
		info, err := fs.Stat(src, m)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("source %q does not exist", m)
			}
			return err
		}
		if info.IsDir() {
			continue
		}
		if !strings.HasSuffix(m, ".tar.gz") && !strings.HasSuffix(m, ".tgz") {
			return fmt.Errorf("strategy Extract: %s is not a tarball (.tar.gz, .tgz)", m)
		}
		if err := mkdirAll(out, destRel); err != nil {
			return err
		}
		f, err := src.Open(m)
		if err != nil {
			return err
		}
		_, err = ocisource.Extract(f, filepath.Join(out.Name(), filepath.FromSlash(destRel)), 0)
		f.Close()
		if err != nil {
			return fmt.Errorf("strategy Extract: %s: %w", m, err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no tarball matches pattern %q in source %s", pattern, alias)
	}
	return nil
}

// copyTree copies directory dir of src to target in out, recursively,
// leaving out what exclude matches (relative to the source's root or to
// base) and git metadata.
func copyTree(src fs.FS, dir string, out *os.Root, target string, exclude []string, base string) error {
	return fs.WalkDir(src, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return mkdirAll(out, target)
		}
		rel := p
		if dir != "." {
			rel = strings.TrimPrefix(p, dir+"/")
		}
		if isGitDir(d.Name()) || excluded(p, base, exclude) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		to := path.Join(target, rel)
		if d.IsDir() {
			return mkdirAll(out, to)
		}
		if !d.Type().IsRegular() {
			info, err := fs.Stat(src, p) // a link: what it points to, in the root
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
		}
		return copyFile(src, p, out, to, false)
	})
}

func isGitDir(name string) bool { return path.Base(name) == ".git" }

func mkdirAll(out *os.Root, dir string) error {
	if dir == "." || dir == "" {
		return nil
	}
	return out.MkdirAll(filepath.FromSlash(dir), 0o755)
}

// copyFile copies file p of src to target in out; with merge, a YAML file
// merges into a target that exists.
func copyFile(src fs.FS, p string, out *os.Root, target string, merge bool) error {
	if err := mkdirAll(out, path.Dir(target)); err != nil {
		return err
	}
	data, err := fs.ReadFile(src, p)
	if err != nil {
		return err
	}
	name := filepath.FromSlash(target)
	if merge {
		if old, err := out.ReadFile(name); err == nil {
			merged, err := mergeYAML(old, data)
			if err != nil {
				return fmt.Errorf("merging %s into %s: %w", p, target, err)
			}
			return out.WriteFile(name, merged, 0o644)
		}
	}
	mode := fs.FileMode(0o644)
	if info, err := fs.Stat(src, p); err == nil {
		mode = info.Mode().Perm()
	}
	return out.WriteFile(name, data, mode)
}

// mergeYAML merges overlay's documents into base's (each file's documents
// merged into one map first), as source-watcher's Merge strategy does.
func mergeYAML(base, overlay []byte) ([]byte, error) {
	b, err := loadYAML(base)
	if err != nil {
		return nil, err
	}
	o, err := loadYAML(overlay)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(mergeMap(b, o))
}

func loadYAML(data []byte) (map[string]any, error) {
	out := map[string]any{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		doc := map[string]any{}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
		out = mergeMap(out, doc)
	}
}

// mergeMap merges overlay into base: maps recursively, anything else
// (lists included) replaced.
func mergeMap(base, overlay map[string]any) map[string]any {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range overlay {
		if vm, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = mergeMap(bm, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// selectionRoot is the part of pattern before its first glob segment.
func selectionRoot(pattern string) string {
	var parts []string
	for _, s := range strings.Split(path.Clean(pattern), "/") {
		if strings.ContainsAny(s, "*?[]") {
			break
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "."
	}
	return path.Join(parts...)
}

// excluded says whether p (relative to the source's root) matches one of
// patterns, itself or relative to base; a pattern without "/" matches
// the file name at any depth.
func excluded(p, base string, patterns []string) bool {
	if len(patterns) == 0 {
		return false
	}
	cands := []string{p}
	if base != "." && base != "" {
		if rel, ok := strings.CutPrefix(p, base+"/"); ok {
			cands = append(cands, rel)
		}
	}
	for _, pat := range patterns {
		for _, c := range cands {
			if globMatch(pat, c) {
				return true
			}
		}
		if !strings.Contains(pat, "/") && globMatch(pat, path.Base(p)) {
			return true
		}
	}
	return false
}

// globMatch matches name against pattern, path.Match's syntax per
// segment, "**" standing for any number of segments.
func globMatch(pattern, name string) bool {
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// digestDir is the SHA-256 of dir's files, names and contents, in order.
func digestDir(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(data))
		h.Write(data)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}
