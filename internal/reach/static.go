// Package reach tells which units of a configuration a change can reach:
// which files a unit's build can read (Static, a read set that cannot miss
// one: when in doubt it says so, and the unit is rendered), and, from the
// files a pull request changed, which units to render (Affected), as Flux
// would rebuild them: a unit whose files, own Kustomization, source or
// values changed, and the units that depend on what it emits.
package reach

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// ReadSet is what a unit's build can read below the repository root:
// every path at or below one of Roots (slash-separated, relative to the
// root; a root may be a file, a directory or a path that does not exist,
// whose creation changes the build). Unknown, when set, says why the set
// cannot be trusted (a remote resource, a path leaving the repository, a
// kustomization that does not parse): the unit is rendered whatever
// changed.
type ReadSet struct {
	Roots   []string
	Unknown string
	// Helm says a YAML file it reads names Helm's API group (a
	// HelmRelease, or a template that makes one); CRDs that one holds a
	// CustomResourceDefinition.
	Helm, CRDs bool
	// ChartPaths are the paths (relative to the root) that the files
	// naming Helm's API name, where a HelmRelease's chart and values
	// files from this repository are; ChartPathsUnknown says one of them
	// is substituted (${var}), so that any may be.
	ChartPaths        []string
	ChartPathsUnknown bool
	// ValuesFrom says such a file names valuesFrom: ConfigMaps and
	// Secrets of the configuration may be a chart's values.
	ValuesFrom bool
}

// Covers reports whether a change to p (slash-separated, relative to the
// root) can change what the build reads.
func (s ReadSet) Covers(p string) bool {
	for _, r := range s.Roots {
		if under(p, r) {
			return true
		}
	}
	return false
}

// kustomizationNames are the files kustomize loads as a directory's
// kustomization.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// resourceFields name local paths or remote URLs in a kustomization: an
// entry that is no path of the repository is a remote base (or a missing
// one), read from elsewhere.
var resourceFields = []string{"resources", "bases", "components", "crds"}

// Static is the read set of a build of dir (relative to root, which is
// absolute with symlinks evaluated) with these spec.components (relative
// to dir), as Flux builds it: kustomize with no load restrictions inside
// the repository, so a kustomization may read "../common". It starts from
// dir and the components and adds, for every file below them, every
// string a YAML file holds that names a path going up ("../x", "a/../../b",
// "key=../file"), and the target of every symlink; whatever the field, so
// that no field kustomize learns later (or a plugin's configuration)
// escapes it. A kustomization's resources that name nothing in the
// repository (a remote base) or an absolute path, a kustomization that
// does not parse, kustomize's Helm inflation, and a path or symlink
// leaving the repository make it Unknown.
func Static(root, dir string, components []string) ReadSet {
	s := &static{root: root, walked: map[string]bool{}, visited: map[string]bool{}, precise: map[string]bool{}}
	dir = clean(dir)
	s.visit(dir)
	for _, c := range components {
		s.visit(clean(path.Join(dir, c)))
	}
	for i := 0; i < len(s.roots) && s.unknown == ""; i++ {
		s.walk(s.roots[i])
	}
	if s.unknown != "" {
		return ReadSet{Unknown: s.unknown}
	}
	return ReadSet{Roots: minimal(s.roots), Helm: s.helm, CRDs: s.crds, ChartPaths: slices.Sorted(slices.Values(s.chartPaths)), ChartPathsUnknown: s.chartPathsUnknown, ValuesFrom: s.valuesFrom}
}

type static struct {
	root string
	// roots are read whole (every file below, walked); files one by one
	// (only themselves).
	roots, files    []string
	walked, visited map[string]bool
	// precise are the kustomization files visit reads field by field:
	// no other string of theirs names a path.
	precise    map[string]bool
	unknown    string
	helm, crds bool
	// chartPaths: see ReadSet.
	chartPaths        []string
	chartPathsUnknown bool
	valuesFrom        bool
}

func (s *static) doubt(format string, args ...any) {
	if s.unknown == "" {
		s.unknown = fmt.Sprintf(format, args...)
	}
}

// add makes p a root unless one already covers it; a path leaving the
// repository makes the set unknown.
func (s *static) add(p string) {
	if p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		s.doubt("%s is outside the repository", p)
		return
	}
	for _, r := range s.roots {
		if under(p, r) {
			return
		}
	}
	s.roots = append(s.roots, p)
}

// walk reads every file at or below the root r.
func (s *static) walk(r string) {
	if s.walked[r] {
		return
	}
	s.walked[r] = true
	abs := filepath.Join(s.root, filepath.FromSlash(r))
	err := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a path that does not exist reads as missing: its creation is a change of r
			}
			return err
		}
		rel, _ := filepath.Rel(s.root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			s.symlink(rel, p)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		s.file(rel, p)
		if s.unknown != "" {
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		s.doubt("reading %s: %v", r, err)
	}
}

// symlink adds where the link at rel points, inside the repository.
func (s *static) symlink(rel, abs string) {
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		// A dangling link reads as missing; where it points is
		// what a change would create.
		dest, lerr := os.Readlink(abs)
		if lerr != nil {
			s.doubt("symlink %s: %v", rel, err)
			return
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(abs), dest)
		}
		target = filepath.Clean(dest)
	}
	t, err := filepath.Rel(s.root, target)
	if err != nil {
		s.doubt("symlink %s: %v", rel, err)
		return
	}
	s.add(clean(filepath.ToSlash(t)))
}

// file reads the YAML file rel for the paths it names that go up.
func (s *static) file(rel, abs string) {
	base := path.Base(rel)
	isKustomization := slices.Contains(kustomizationNames, base)
	switch path.Ext(base) {
	case ".yaml", ".yml", ".json":
	default:
		if !isKustomization {
			return // not loaded as YAML: only read as data (a generator's file), which names nothing
		}
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		s.doubt("reading %s: %v", rel, err)
		return
	}
	if bytes.Contains(data, []byte("helm.toolkit.fluxcd.io")) {
		s.helm = true
		s.chartPathsOf(data)
		s.valuesFrom = s.valuesFrom || bytes.Contains(data, []byte("valuesFrom"))
	}
	s.crds = s.crds || bytes.Contains(data, []byte("CustomResourceDefinition"))
	if !isKustomization && !bytes.Contains(data, []byte("..")) {
		return
	}
	dir := path.Dir(rel)
	docs, err := documents(data)
	if err != nil {
		if isKustomization {
			s.doubt("kustomization %s does not parse: %v", rel, err)
			return
		}
		// A manifest that does not parse fails the build: nothing it
		// names is read; but a stray ".." in it is taken at its word.
		for _, f := range bytes.Fields(data) {
			s.str(dir, strings.Trim(string(f), `"',[]{}`))
		}
		return
	}
	if s.precise[rel] {
		return // visit reads its fields
	}
	for _, doc := range docs {
		if isKustomization {
			s.kustomization(rel, doc)
		}
		strings_(doc, func(v string) { s.str(dir, v) })
	}
}

// kustomization checks what a kustomization reads from elsewhere.
func (s *static) kustomization(rel string, doc any) {
	m, ok := doc.(map[string]any)
	if !ok {
		return
	}
	dir := path.Dir(rel)
	for _, f := range resourceFields {
		list, _ := m[f].([]any)
		for _, e := range list {
			v, ok := e.(string)
			if !ok {
				continue
			}
			if filepath.IsAbs(v) || strings.Contains(v, "://") {
				s.doubt("%s: %s %s is not a path of the repository", rel, f, v)
				return
			}
			p := path.Join(dir, v)
			if _, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(p))); err != nil {
				// kustomize takes a missing local path for a remote
				// one (github.com/org/repo//dir?ref=x), or fails.
				s.doubt("%s: %s %s is not a path of the repository (a remote base?)", rel, f, v)
				return
			}
		}
	}
	if charts, ok := m["helmCharts"]; ok && charts != nil {
		s.doubt("%s: helmCharts (kustomize's Helm inflation) reads charts from elsewhere", rel)
	}
}

// str adds the path v names, relative to dir, when it goes up; "k=v"
// (a generator's file with its key) names v.
func (s *static) str(dir, v string) {
	if strings.ContainsAny(v, "\n") {
		return // inline content (a patch), not a path; its own strings are not paths either
	}
	if i := strings.IndexByte(v, '='); i >= 0 {
		s.str(dir, v[i+1:])
	}
	if !goesUp(v) {
		return
	}
	if path.IsAbs(v) {
		return // an absolute path leaves the build's scratch copy: the build fails whatever changed
	}
	s.add(clean(path.Join(dir, v)))
}

// goesUp says whether v has a ".." path element.
func goesUp(v string) bool {
	for _, e := range strings.Split(v, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

// documents parses the YAML documents of data.
func documents(data []byte) ([]any, error) {
	var out []any
	for _, chunk := range splitDocuments(data) {
		if len(bytes.TrimSpace(chunk)) == 0 {
			continue
		}
		var doc any
		if err := yaml.Unmarshal(chunk, &doc); err != nil {
			return nil, err
		}
		out = append(out, doc)
	}
	return out, nil
}

// splitDocuments splits a YAML stream at its "---" lines.
func splitDocuments(data []byte) [][]byte {
	var out [][]byte
	start := 0
	lines := bytes.SplitAfter(data, []byte("\n"))
	offset := 0
	for _, l := range lines {
		t := bytes.TrimRight(l, "\r\n")
		if bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			out = append(out, data[start:offset])
			start = offset + len(l)
		}
		offset += len(l)
	}
	return append(out, data[start:])
}

// strings_ calls f with every string of doc, keys included.
func strings_(doc any, f func(string)) {
	switch v := doc.(type) {
	case string:
		f(v)
	case []any:
		for _, e := range v {
			strings_(e, f)
		}
	case map[string]any:
		for k, e := range v {
			f(k)
			strings_(e, f)
		}
	}
}

// under says whether p is r or below it ("." holds everything).
func under(p, r string) bool {
	return r == "." || p == r || strings.HasPrefix(p, r+"/")
}

func clean(p string) string { return path.Clean(filepath.ToSlash(p)) }

// minimal drops the roots another covers, sorted.
func minimal(roots []string) []string {
	slices.Sort(roots)
	var out []string
	for _, r := range roots {
		if len(out) > 0 && under(r, out[len(out)-1]) {
			continue
		}
		// a shorter root sorts first only if it is a prefix; "a" < "a/b" < "a-b"
		covered := false
		for _, o := range out {
			if under(r, o) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, r)
		}
	}
	return out
}

// visit reads what kustomize reads of d, a directory it builds (the
// unit's, a component, a resource): with a kustomization file, the files
// and directories its fields name; without one, every file below it (a
// kustomization is generated listing its manifests).
func (s *static) visit(d string) {
	if s.visited[d] || s.unknown != "" {
		return
	}
	s.visited[d] = true
	abs := filepath.Join(s.root, filepath.FromSlash(d))
	if s.linked(d, abs) {
		return
	}
	info, err := os.Stat(abs)
	switch {
	case err != nil:
		s.add(d) // missing: the build fails until it is created
		return
	case !info.IsDir():
		s.addFile(d)
		return
	}
	kfile := ""
	for _, n := range kustomizationNames {
		p := path.Join(d, n)
		if _, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(p))); err == nil && kfile == "" {
			kfile = p
			s.precise[p] = true
		}
		s.addFile(p) // probed: creating another is a change too
	}
	if kfile == "" {
		s.add(d)
		return
	}
	data, err := os.ReadFile(filepath.Join(s.root, filepath.FromSlash(kfile)))
	if err != nil {
		s.doubt("reading %s: %v", kfile, err)
		return
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		s.doubt("kustomization %s does not parse: %v", kfile, err)
		return
	}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		s.field(d, kfile, key, m[key])
	}
}

// noFiles are kustomization fields that name no file.
var noFiles = []string{"apiVersion", "kind", "metadata", "namespace", "namePrefix", "nameSuffix", "commonLabels", "labels",
	"commonAnnotations", "images", "imageTags", "replicas", "vars", "sortOptions", "buildMetadata", "generatorOptions", "patchesJson6902Inline"}

// field reads what one field of the kustomization kfile (in d) names.
func (s *static) field(d, kfile, key string, v any) {
	join := func(p string) string { return clean(path.Join(d, p)) }
	list, _ := v.([]any)
	switch {
	case slices.Contains(noFiles, key):
	case slices.Contains(resourceFields, key):
		for _, e := range list {
			p, ok := e.(string)
			if !ok {
				continue
			}
			if filepath.IsAbs(p) || strings.Contains(p, "://") {
				s.doubt("%s: %s %s is not a path of the repository", kfile, key, p)
				return
			}
			if _, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(join(p)))); err != nil {
				s.doubt("%s: %s %s is not a path of the repository (a remote base?)", kfile, key, p)
				return
			}
			s.visit(join(p))
		}
	case key == "patches" || key == "patchesJson6902" || key == "replacements":
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				if p, ok := m["path"].(string); ok {
					s.addFile(join(p))
				}
			}
		}
	case key == "patchesStrategicMerge":
		for _, e := range list {
			if p, ok := e.(string); ok && !strings.ContainsAny(p, "\n:") {
				s.addFile(join(p))
			}
		}
	case key == "configMapGenerator" || key == "secretGenerator":
		for _, e := range list {
			m, _ := e.(map[string]any)
			for _, k := range []string{"files", "envs"} {
				l, _ := m[k].([]any)
				for _, f := range l {
					if p, ok := f.(string); ok {
						if i := strings.IndexByte(p, '='); i >= 0 && k == "files" {
							p = p[i+1:]
						}
						s.addFile(join(p))
					}
				}
			}
			if p, ok := m["env"].(string); ok {
				s.addFile(join(p))
			}
		}
	case key == "configurations":
		for _, e := range list {
			if p, ok := e.(string); ok {
				s.addFile(join(p))
			}
		}
	case key == "openapi":
		if m, ok := v.(map[string]any); ok {
			if p, ok := m["path"].(string); ok {
				s.addFile(join(p))
			}
		}
	case key == "generators" || key == "transformers" || key == "validators":
		// Plugin configurations (files, directories or inline) may name
		// further files, relative to d: all of d is read.
		s.add(d)
	case key == "helmCharts" || key == "helmGlobals" || key == "helmChartInflationGenerator":
		if v != nil {
			s.doubt("%s: %s (kustomize's Helm inflation) reads charts from elsewhere", kfile, key)
		}
	default:
		s.doubt("%s: field %s is not one this analysis knows", kfile, key)
	}
}

// addFile makes the file p a root, read on its own.
func (s *static) addFile(p string) {
	if s.walked[p] || s.unknown != "" {
		return
	}
	s.add(p)
	if s.unknown != "" {
		return
	}
	s.walked[p] = true
	abs := filepath.Join(s.root, filepath.FromSlash(p))
	if s.linked(p, abs) {
		return
	}
	if info, err := os.Stat(abs); err == nil {
		if info.IsDir() {
			s.walked[p] = false
			s.walk(p)
			return
		}
		s.file(p, abs)
	}
}

// linked says whether p (abs) goes through a symlink: then p and where
// it leads are read whole.
func (s *static) linked(p, abs string) bool {
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false // missing, or dangling: walk and symlink tell
	}
	if resolved == abs {
		return false
	}
	t, err := filepath.Rel(s.root, resolved)
	if err != nil {
		s.doubt("%s: %v", p, err)
		return true
	}
	s.add(p)
	s.add(clean(filepath.ToSlash(t)))
	return true
}

// chartPathsOf adds the paths a file naming Helm's API holds: a
// HelmRelease's spec.chart.spec.chart ("./charts/podinfo") and
// valuesFiles, relative to its source's root, as every string with a
// slash and no space is taken.
func (s *static) chartPathsOf(data []byte) {
	docs, err := documents(data)
	if err != nil {
		s.chartPathsUnknown = true
		return
	}
	for _, doc := range docs {
		strings_(doc, func(v string) {
			switch {
			case strings.Contains(v, ".io/"):
				// an API version
			case strings.Contains(v, "${"):
				s.chartPathsUnknown = true
			case strings.Contains(v, "/") && !strings.ContainsAny(v, " \n:") && !path.IsAbs(v):
				if p := clean(v); p != ".." && !strings.HasPrefix(p, "../") && !slices.Contains(s.chartPaths, p) {
					s.chartPaths = append(s.chartPaths, p)
				}
			}
		})
	}
}
