package build

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	kustypes "sigs.k8s.io/kustomize/api/types"
)

// preflight walks the local kustomization graph before kustomize runs.
// Kustomize would fetch remote bases and URLs on its own (over git or
// HTTP, past any file system), and its errors for a file outside the
// kustomization directory or a manifest without kind name neither the
// kustomization nor the file in repository terms; checking first gives
// errors that say which file to fix and how.
type preflight struct {
	fsys        *confinedFS
	root        string
	allowRemote bool
	// refused says why remote bases are refused whatever allowRemote
	// says (Options.NoRemoteBases).
	refused string
	seen    map[string]bool
	// order are the kustomizations read, each after those it builds on.
	order []visited
	// checked are files already read and checked (by the generator).
	checked map[string]error
	// generated is the directory whose kustomization Build generated, if
	// any: its files are named on their own, the user never wrote the
	// kustomization listing them.
	generated string
}

// field is a kustomization list field, named for messages.
type field struct {
	name    string
	entries []string
}

// remoteBase matches what kustomize treats as a git repository rather
// than a local path: a URL scheme, go-getter's git:: prefix, a
// github.com/ path or an SCP-style user@host: address.
var remoteBase = regexp.MustCompile(`(?i)^(git::|[a-z][a-z0-9+.-]*://|github\.com[/:]|[a-z][a-z0-9-]*@)`)

// isRemoteFile matches what kustomize's loader fetches over HTTP.
func isRemoteFile(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// kustomization checks the kustomization in dir and everything it
// references locally, and returns it (nil if dir has none; kustomize then
// reports that).
func (p *preflight) kustomization(dir string) (*kustypes.Kustomization, error) {
	if p.seen[dir] {
		return nil, nil
	}
	p.seen[dir] = true
	kfile, err := kustomizationFile(p.fsys, dir)
	if err != nil || kfile == "" {
		return nil, err
	}
	data, err := p.fsys.ReadFile(kfile)
	if err != nil {
		return nil, err
	}
	// Parsed as kustomize parses it, unknown fields being errors.
	var k kustypes.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil, atFile(fmt.Errorf("%s: %w", relTo(p.root, kfile), err), p.root, kfile, parseErrorLine(data))
	}
	at := relTo(p.root, kfile)
	if len(k.HelmCharts)+len(k.HelmChartInflationGenerator) > 0 {
		// kustomize would run helm as a program (--enable-helm): no exec
		// here. The same chart, declared the Flux way, is rendered in-process.
		return nil, fmt.Errorf("%s: helmCharts: kustomize's Helm inflator (a helm binary) is not run; declare the chart as a Flux HelmRepository and HelmRelease in the unit instead, which are rendered in-process (see docs/helm.md)", at)
	}
	for _, f := range []field{{"resources", k.Resources}, {"bases", k.Bases}, {"components", k.Components}} {
		for _, e := range f.entries {
			if err := p.resource(at, data, dir, f.name, e); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range []field{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}} {
		for _, e := range f.entries {
			if err := p.plugin(at, dir, f.name, e); err != nil {
				return nil, err
			}
		}
	}
	for _, e := range fileEntries(&k) {
		if isRemoteFile(e) && !p.allowRemote {
			return nil, p.remoteErr(at, "file", e)
		}
	}
	p.order = append(p.order, visited{dir: dir, file: kfile, k: &k})
	return &k, nil
}

// resource checks one resources/bases/components entry of the
// kustomization at (its text kdata): remote bases are refused unless
// allowed, directories are checked recursively, files must lie inside the
// repository root (Flux's loading rule: anywhere in the repository, never
// outside it) and hold only Kubernetes objects, and a local entry must
// exist (said here at the entry's line, which kustomize's error lacks).
func (p *preflight) resource(at string, kdata []byte, dir, field, entry string) error {
	if remoteBase.MatchString(entry) {
		if p.allowRemote {
			return nil
		}
		return p.remoteErr(at, field, entry)
	}
	path := filepath.Join(dir, entry)
	if err := p.fsys.check(path); err != nil {
		return fmt.Errorf("%s: %s entry %q: %w", at, field, entry, err)
	}
	switch {
	case p.fsys.IsDir(path):
		_, err := p.kustomization(path)
		return err
	case !p.fsys.Exists(path):
		return &FileError{File: at, Line: entryLine(kdata, field, entry),
			Err: fmt.Errorf("%s: %s entry %q: %s does not exist", at, field, entry, relTo(p.root, path))}
	}
	err, ok := p.checked[path]
	if !ok {
		err = p.check(path)
	}
	switch {
	case err != nil && dir == p.generated:
		return fmt.Errorf("%s: %w", relTo(p.root, path), err)
	case err != nil:
		return fmt.Errorf("%s (listed in %s): %w", relTo(p.root, path), at, err)
	}
	return nil
}

// check reads path and checks that it holds only Kubernetes objects.
func (p *preflight) check(path string) error {
	data, err := p.fsys.ReadFile(path)
	if err != nil {
		return err
	}
	docs, err := decodeDocuments(data)
	if err != nil {
		return atFile(err, p.root, path, parseErrorLine(data))
	}
	return checkManifestFile(p.root, path, data, docs)
}

// plugin checks a generators/transformers/validators entry, which is a
// file, a directory with a kustomization, or inline YAML.
func (p *preflight) plugin(at, dir, field, entry string) error {
	if strings.Contains(entry, "\n") {
		return nil
	}
	if remoteBase.MatchString(entry) {
		if p.allowRemote {
			return nil
		}
		return p.remoteErr(at, field, entry)
	}
	if path := filepath.Join(dir, entry); p.fsys.IsDir(path) {
		_, err := p.kustomization(path)
		return err
	}
	return nil
}

func (p *preflight) remoteErr(at, field, entry string) error {
	if p.refused != "" {
		return fmt.Errorf("%s: %s entry %q is remote: %w: %s", at, field, entry, ErrNoRemoteBases, p.refused)
	}
	return fmt.Errorf("%s: %s entry %q is remote: %w so that a build uses only what is in the repository; vendor it into the repository, or allow remote bases to fetch it",
		at, field, entry, ErrRemoteBase)
}

// fileEntries lists the kustomization fields kustomize loads as files,
// any of which it would fetch over HTTP given a URL.
func fileEntries(k *kustypes.Kustomization) []string {
	out := append([]string{}, k.Crds...)
	out = append(out, k.Configurations...)
	if p, ok := k.OpenAPI["path"]; ok {
		out = append(out, p)
	}
	for _, ps := range [][]kustypes.Patch{k.Patches, k.PatchesJson6902} {
		for _, patch := range ps {
			out = append(out, patch.Path)
		}
	}
	for _, patch := range k.PatchesStrategicMerge {
		out = append(out, string(patch))
	}
	var sources []kustypes.KvPairSources
	for _, g := range k.ConfigMapGenerator {
		sources = append(sources, g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		sources = append(sources, g.KvPairSources)
	}
	for _, s := range sources {
		for _, f := range append(append(s.FileSources, s.EnvSources...), s.EnvSource) {
			// files may be "key=path"; keep both readings.
			out = append(out, f)
			if _, v, ok := strings.Cut(f, "="); ok {
				out = append(out, v)
			}
		}
	}
	return out
}
