package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// Read reads every Flux Kustomization in path: a YAML file, or a
// directory walked recursively for *.yaml and *.yml files (hidden files
// and directories, such as .git, skipped), multi-document files included.
// Documents of other kinds are ignored (a clusters/<name>/ directory also
// holds Namespaces, ...), and so is kustomize's own kustomization.yaml
// (apiVersion kustomize.config.k8s.io); ConfigMaps and Secrets are kept
// as Values, GitRepositories, OCIRepositories and Buckets as Sources, and
// ArtifactGenerators as Generators, for units to resolve their sourceRef.
//
// root is the repository root that every spec.path is relative to:
// absolute, with symlinks evaluated. path must lie inside it.
//
// Every problem in the files is an *Error, and all of them are returned
// joined (see Problems), with a nil Set; a root or path that cannot be
// used is a plain error.
func Read(root, path string) (*Set, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("config root %s is not an absolute path", root)
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("config %s is outside the repository root %s", path, root)
	}
	files, dir, err := listFiles(root, abs)
	if err != nil {
		return nil, err
	}
	info, _ := os.Stat(abs) // listFiles stat'ed it
	r := &reader{dir: dir, single: !info.IsDir()}
	var errs []error
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			errs = append(errs, &Error{File: f, Msg: err.Error()})
			continue
		}
		for _, e := range r.file(f, data) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		// The configuration is refused: every problem is reported, its
		// units' own too.
		return nil, errors.Join(append(errs, r.refusals(files)...)...)
	}
	set, problems := r.set()
	if len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = p
		}
		return nil, errors.Join(errs...)
	}
	set.Files = files
	return set, nil
}

// listFiles returns the YAML files at abs (inside root), relative to root,
// slash-separated and sorted, and the directory they were read from.
func listFiles(root, abs string) (files []string, dir string, err error) {
	info, err := os.Stat(abs)
	if err != nil {
		return nil, "", fmt.Errorf("config: %w", err)
	}
	relTo := func(p string) string {
		rel, _ := filepath.Rel(root, p)
		return filepath.ToSlash(rel)
	}
	if !info.IsDir() {
		return []string{relTo(abs)}, relTo(filepath.Dir(abs)), nil
	}
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		hidden := strings.HasPrefix(d.Name(), ".") && p != abs
		switch {
		case d.IsDir() && hidden:
			return filepath.SkipDir
		case d.IsDir() || hidden:
			return nil
		case filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".yml":
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			// Follow a linked file only while it stays in the repository.
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return err
			}
			if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return fmt.Errorf("config: %s links outside the repository root", relTo(p))
			}
			if info, err := os.Stat(real); err != nil || info.IsDir() {
				return nil // a linked directory is not followed, as WalkDir does not
			}
		case !d.Type().IsRegular():
			return nil
		}
		files = append(files, relTo(p))
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	// Sort as Units are documented: by the path as written, which is not
	// WalkDir's order ("a.yaml" sorts before "a/b.yaml").
	slices.Sort(files)
	return files, relTo(abs), nil
}

// reader gathers what the files hold, for set to decide upon.
type reader struct {
	dir            string // the directory read, relative to the root
	single         bool   // a file was read, not a directory
	emitted        bool   // the documents are objects a build emitted
	kustomizations []*kustomization
	values         []*Values
	sources        []*Source
	generators     []*Generator
	notifications  []*Notification
	// instances are the syncs of FluxInstances (see instance), and notes
	// say which FluxInstances could not be read as one.
	instances []*instance
	notes     []string
	// lockdowns are the multi-tenancy lockdowns declared (see Lockdown),
	// in the order read.
	lockdowns []Lockdown
}

// file reads one file's documents, returning its problems, sorted by line.
func (r *reader) file(name string, data []byte) []*Error {
	var errs []*Error
	for _, doc := range split(data) {
		errs = append(errs, r.document(name, doc)...)
	}
	slices.SortStableFunc(errs, func(a, b *Error) int { return a.Line - b.Line })
	return errs
}

// document decodes one document if it is a Flux Kustomization, a
// ConfigMap or a Secret, which its header usually tells without decoding.
func (r *reader) document(file string, text document) []*Error {
	if scanHeader(text.text).skippable() {
		return nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(text.text, &root); err != nil {
		return []*Error{syntaxError(file, text.line, err)}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil // empty
	}
	n := resolve(root.Content[0])
	if n.Kind != yaml.MappingNode {
		return nil // not an object
	}
	return r.node(file, text.line, n, text)
}

// docText is a document's text, read only where it is kept as written:
// whole (from its "---" line, if any), or its body (without it).
type docText interface {
	whole() []byte
	body() []byte
}

// node decodes n, a document's top-level mapping at line of file, whose
// text is text.
func (r *reader) node(file string, line int, n *yaml.Node, text docText) []*Error {
	apiVersion, kind := topString(n, "apiVersion"), topString(n, "kind")
	d := &decoder{file: file, line: line, flat: r.emitted}
	if isInstance(apiVersion, kind) {
		r.instance(d, n)
		return nil
	}
	if notificationKind(apiVersion, kind) {
		r.notification(file, d.fileLine(n.Line), apiVersion, kind, n, text)
		return nil
	}
	if !wanted(apiVersion, kind) {
		field, why := refusal(apiVersion, kind, hasKey(n, "spec"))
		if why == "" {
			return nil
		}
		if top := d.mapping("", n); top != nil {
			d.object = kind
			d.metadata(top)
			line := top.lines[field]
			if line == 0 { // a missing apiVersion: the kind says it is a Kustomization
				line = top.lines["kind"]
			}
			d.add(line, field, why)
		}
		return d.errs
	}
	top := d.mapping("", n)
	if top == nil {
		return d.errs
	}
	line = d.fileLine(n.Line)
	switch {
	case kind == artifactGeneratorKind:
		if g := d.generator(top, apiVersion); g != nil {
			g.File, g.Line = file, line
			r.generators = append(r.generators, g)
		}
		return d.errs
	case kind != kustomizationKind && sourceKind(apiVersion, kind):
		s := d.source(top, kind)
		s.File, s.Line = file, line
		r.sources = append(r.sources, s)
		return d.errs
	}
	if kind != kustomizationKind {
		v := d.values(top, kind, text.body())
		if r.emitted && len(d.errs) > 0 {
			// A ConfigMap a build emitted is the API server's to refuse
			// when its unit applies it; no Kustomization reads this one.
			return nil
		}
		if v != nil {
			v.File, v.Line = file, line
			r.values = append(r.values, v)
		}
		return d.errs
	}
	if isV1alpha1(apiVersion) {
		k := d.kustomizationV1alpha1(top)
		return r.addKustomization(d, k, file, line, text.whole())
	}
	v, ok := parseVersion(apiVersion)
	if !ok {
		d.object = kustomizationKind
		d.metadata(top)
		d.add(top.lines["apiVersion"], "apiVersion", fmt.Sprintf("%q is not a version kustomize-deploy reads: use %s/v1, v1beta2 or v1beta1", apiVersion, fluxGroup))
		return d.errs
	}
	k := d.kustomization(top, v)
	return r.addKustomization(d, k, file, line, text.whole())
}

// addKustomization adds k, decoded by d from doc (at line of file), and
// returns the problems of the configuration: those of k's own refuse its
// unit instead (see Unit.Refused), unless they leave it unnamed.
func (r *reader) addKustomization(d *decoder, k *kustomization, file string, line int, doc []byte) []*Error {
	k.unit.File, k.unit.Line = file, line
	k.unit.Document = doc
	if len(d.errs) > 0 && !unnamed(k.unit, d.errs) {
		k.unit.Refused, d.errs = d.errs, nil
		slices.SortStableFunc(k.unit.Refused, func(a, b *Error) int { return a.Line - b.Line })
	}
	r.kustomizations = append(r.kustomizations, k)
	return d.errs
}

// refusals are the problems of the units read that refuse them (see
// Unit.Refused), in the order Read reports problems: by file (in files'
// order), then line.
func (r *reader) refusals(files []string) []error {
	var out []*Error
	for _, k := range r.kustomizations {
		out = append(out, k.unit.Refused...)
	}
	order := make(map[string]int, len(files))
	for i, f := range files {
		order[f] = i
	}
	slices.SortStableFunc(out, func(a, b *Error) int {
		if c := order[a.File] - order[b.File]; c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	errs := make([]error, len(out))
	for i, e := range out {
		errs[i] = e
	}
	return errs
}

// unnamed says whether u cannot be told apart from other units: its name
// or namespace is missing or invalid, so its problems are the
// configuration's.
func unnamed(u *Unit, errs []*Error) bool {
	if u.Ref.Name == "" {
		return true
	}
	for _, e := range errs {
		if e.Field == "metadata" || e.Field == "metadata.name" || e.Field == "metadata.namespace" {
			return true
		}
	}
	return false
}

// hasKey says whether mapping n has key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// topString returns the string value of key in mapping n.
func topString(n *yaml.Node, key string) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			if s, ok := scalarString(resolve(n.Content[i+1])); ok {
				return s
			}
		}
	}
	return ""
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError names the file and line of a YAML error. yaml.v3 counts
// lines from the document's start, which is line in the file.
func syntaxError(file string, line int, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		line, msg = line+n-1, m[2]
	}
	return &Error{File: file, Line: line, Msg: "YAML: " + msg}
}
