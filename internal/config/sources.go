package config

import (
	"fmt"
	"regexp"
	"strings"

	yaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// Source kinds and groups Read reads besides Kustomizations: the objects
// a Kustomization's spec.sourceRef names.
const (
	sourceGroup       = "source.toolkit.fluxcd.io"
	extensionsGroup   = "source.extensions.fluxcd.io"
	GitRepositoryKind = "GitRepository"
	OCIRepositoryKind = "OCIRepository"
	BucketKind        = "Bucket"
	// HelmRepositoryKind is a HelmRelease's chart source, read wherever
	// the configuration declares it; a Kustomization never names one.
	HelmRepositoryKind = "HelmRepository"
	// HelmChartKind is a chart of a HelmRepository, GitRepository or
	// Bucket, named by a HelmRelease's spec.chartRef.
	HelmChartKind = "HelmChart"
	// ExternalArtifactKind is what an ArtifactGenerator produces (Flux
	// 2.7): a Kustomization names one by the generator's artifacts[].name.
	ExternalArtifactKind  = "ExternalArtifact"
	artifactGeneratorKind = "ArtifactGenerator"
)

// Source is a GitRepository, OCIRepository or Bucket found in the files
// read (source.toolkit.fluxcd.io, any version): what a Kustomization's
// sourceRef may name. Only what tells which repository it is, is read.
type Source struct {
	Kind string
	// Ref is metadata.namespace ("default" when absent) and metadata.name.
	Ref  Ref
	File string
	Line int
	// URL is spec.url (a Bucket's spec.endpoint and spec.bucketName).
	URL string
	// GitRef is a GitRepository's (or an OCIRepository's) spec.ref as
	// written, for messages: "branch main", "tag v1.0.0", "semver
	// >=1.0.0", ...; "" when absent.
	GitRef string
	// Git is what fetching a GitRepository reads of it; nil for other
	// kinds.
	Git *GitSpec
	// OCI is what pulling an OCIRepository reads of it; nil for other
	// kinds.
	OCI *OCISpec
	// Helm is what fetching a HelmRepository's charts reads of it; nil
	// for other kinds.
	Helm *HelmSpec
	// Chart is what a HelmChart names; nil for other kinds.
	Chart *ChartSpec
	// Bucket is what downloading a Bucket reads of it; nil for other
	// kinds.
	Bucket *BucketSpec
}

// BucketSpec is what a Bucket's download reads: spec.provider (generic,
// aws), spec.bucketName, spec.endpoint, spec.region, spec.prefix,
// spec.insecure, the Secret of spec.secretRef (accesskey, secretkey),
// spec.ignore; Unsupported names the fields set that kustomize-deploy
// does not honour.
type BucketSpec struct {
	Provider, BucketName, Endpoint, Region, Prefix string
	Insecure                                       bool
	SecretName                                     string
	Ignore                                         *string
	Unsupported                                    []string
}

// ChartSpec is a HelmChart's spec: the chart (a name in a
// HelmRepository, a path in a GitRepository or Bucket), its version (a
// semver range), its source (in the HelmChart's namespace) and values
// files; Unsupported names the fields set that kustomize-deploy does not
// honour.
type ChartSpec struct {
	Chart, Version           string
	SourceKind, SourceName   string
	ValuesFiles              []string
	IgnoreMissingValuesFiles bool
	Unsupported              []string
}

// HelmSpec is what fetching a chart from a HelmRepository reads: spec.type
// (OCI: an OCI registry, else an HTTP(S) repository), the Secrets of
// spec.secretRef and spec.certSecretRef, spec.passCredentials,
// spec.insecure and spec.provider; Unsupported names the fields set that
// kustomize-deploy does not honour.
type HelmSpec struct {
	OCI                        bool
	SecretName, CertSecretName string
	PassCredentials, Insecure  bool
	Provider                   string
	Unsupported                []string
}

// GitSpec is what a GitRepository's fetch reads: spec.ref, the Secret of
// spec.secretRef, spec.ignore; Unsupported names the fields set that
// change what source-controller fetches but kustomize-deploy does not
// honour, so that a fetch is refused rather than built from another
// tree than Flux's.
type GitSpec struct {
	Branch, Tag, SemVer, Name, Commit string
	SecretName                        string
	// Provider is spec.provider github (the job's GitHub token), else "".
	Provider    string
	Ignore      *string
	Unsupported []string
}

// OCISpec is what an OCIRepository's pull reads: spec.ref,
// spec.layerSelector, the Secret of spec.secretRef, spec.insecure,
// spec.ignore; Unsupported names the fields set that change what
// source-controller pulls (or how it reaches the registry) but
// kustomize-deploy does not honour, so that a pull is refused rather
// than built from another artifact than Flux's.
type OCISpec struct {
	Digest, SemVer, SemVerFilter, Tag string
	MediaType, Operation              string
	SecretName                        string
	Insecure                          bool
	Ignore                            *string
	// Provider is spec.provider ("" or generic: the secretRef's
	// credentials; aws, azure, gcp: the cloud's identity), honoured by
	// whoever pulls as far as it can, and refused by name beyond.
	Provider string
	// Verify is spec.verify with provider cosign (nil when absent);
	// notation is Unsupported.
	Verify      *Verify
	Unsupported []string
}

// Verify is a source's spec.verify with provider cosign, as Flux reads
// it: the public keys of the Secret SecretName names verify the
// artifact's signature; without one it is verified keyless, its Fulcio
// certificate's identity matched by MatchOIDCIdentity (one entry must
// match; none matches any identity).
type Verify struct {
	SecretName        string
	MatchOIDCIdentity []OIDCIdentity
}

// OIDCIdentity is one spec.verify.matchOIDCIdentity entry: regular
// expressions the certificate's OIDC issuer and subject must match.
type OIDCIdentity struct {
	Issuer, Subject string
}

// Generator is a Flux 2.7 ArtifactGenerator
// (source.extensions.fluxcd.io/v1beta1): each of its Artifacts is an
// ExternalArtifact of the generator's namespace, made by copying files
// from its Sources.
type Generator struct {
	Ref       Ref
	File      string
	Line      int
	Sources   []GeneratorSource
	Artifacts []Artifact
	// PathPattern, when set, makes Artifacts templates: one of each per
	// directory it matches (see ArtifactsFor).
	PathPattern *PathPattern
}

// GeneratorSource is one spec.sources entry: Source's namespace defaults
// to the generator's.
type GeneratorSource struct {
	Alias  string
	Source SourceRef
}

// Artifact is one spec.artifacts entry.
type Artifact struct {
	Name string
	// Revision and OriginRevision are "@alias" or "".
	Revision, OriginRevision string
	Copy                     []Copy
}

// Copy is one copy operation: From is "@alias/pattern", To is
// "@artifact/path"; Strategy is "Overwrite" (when absent) or "Merge".
type Copy struct {
	From, To string
	Exclude  []string
	Strategy string
}

// Copy strategies.
const (
	StrategyOverwrite = "Overwrite"
	StrategyMerge     = "Merge"
	StrategyExtract   = "Extract"
)

// SourceRef is a Kustomization's spec.sourceRef (or a generator's source),
// its namespace defaulted to the referring object's, as Flux does.
type SourceRef struct{ Kind, Namespace, Name string }

// String is KIND/NAMESPACE/NAME, as --source takes it.
func (s SourceRef) String() string { return s.Kind + "/" + s.Namespace + "/" + s.Name }

// Source returns the source of kind named ref, or nil.
func (s *Set) Source(kind string, ref Ref) *Source {
	for _, src := range s.Sources {
		if src.Kind == kind && src.Ref == ref {
			return src
		}
	}
	return nil
}

// Artifact returns the generator of the ExternalArtifact named ref, with
// the artifact, or nil.
func (s *Set) Artifact(ref Ref) (*Generator, *Artifact) {
	for _, g := range s.Generators {
		if g.Ref.Namespace != ref.Namespace {
			continue
		}
		if g.PathPattern != nil {
			continue // its artifacts are found in its source (see source.Resolver)
		}
		for i := range g.Artifacts {
			if g.Artifacts[i].Name == ref.Name {
				return g, &g.Artifacts[i]
			}
		}
	}
	return nil, nil
}

// SyncSources are the sources of Flux's own sync (see Unit.Sync): the
// configuration's files are, by its own word, what those sources serve.
func (s *Set) SyncSources() []SourceRef {
	var out []SourceRef
	for _, u := range s.Units {
		if u.Sync && u.Source.Kind != "" {
			out = append(out, u.Source)
		}
	}
	return out
}

// sourceKind says whether Read reads objects of apiVersion and kind as
// sources.
func sourceKind(apiVersion, kind string) bool {
	switch groupOf(apiVersion) {
	case sourceGroup:
		return kind == GitRepositoryKind || kind == OCIRepositoryKind || kind == BucketKind || kind == HelmRepositoryKind || kind == HelmChartKind
	case extensionsGroup:
		return kind == artifactGeneratorKind
	}
	return false
}

// isSourceKindName says whether kind may be read as a source, whatever
// its group (the header scan's quick test).
func isSourceKindName(kind string) bool {
	return kind == GitRepositoryKind || kind == OCIRepositoryKind || kind == BucketKind || kind == HelmRepositoryKind || kind == HelmChartKind || kind == artifactGeneratorKind
}

// source reads a GitRepository, OCIRepository or Bucket. Only what tells
// the source apart is read; the rest is source-controller's business.
func (d *decoder) source(top *fields, kind string) *Source {
	d.object = kind
	s := &Source{Kind: kind, Ref: d.metadata(top)}
	spec := top.object("spec")
	if spec == nil {
		return s
	}
	switch kind {
	case BucketKind:
		s.URL = strings.TrimSuffix(spec.str("endpoint"), "/") + "/" + spec.str("bucketName")
	default:
		s.URL = spec.str("url")
	}
	if kind == HelmRepositoryKind {
		s.Helm = d.helmSpec(spec)
	}
	if kind == BucketKind {
		b := &BucketSpec{Provider: spec.str("provider"), BucketName: spec.str("bucketName"), Endpoint: spec.str("endpoint"),
			Region: spec.str("region"), Prefix: spec.str("prefix"), Insecure: spec.boolean("insecure")}
		if ref := spec.object("secretRef"); ref != nil {
			b.SecretName = ref.str("name")
		}
		if spec.has("ignore") {
			ignore := spec.str("ignore")
			b.Ignore = &ignore
		}
		for _, k := range []string{"sts", "certSecretRef", "proxySecretRef", "serviceAccountName"} {
			if spec.has(k) {
				b.Unsupported = append(b.Unsupported, "spec."+k)
			}
		}
		s.Bucket = b
	}
	if kind == HelmChartKind {
		s.Chart = d.chartSpec(spec)
		s.GitRef = strings.TrimSpace(s.Chart.Chart + " " + s.Chart.Version)
	}
	if kind == OCIRepositoryKind {
		s.OCI = d.ociSpec(spec)
		var parts []string
		for _, p := range [][2]string{{"digest", s.OCI.Digest}, {"semver", s.OCI.SemVer}, {"semverFilter", s.OCI.SemVerFilter}, {"tag", s.OCI.Tag}} {
			if p[1] != "" {
				parts = append(parts, p[0]+" "+p[1])
			}
		}
		s.GitRef = strings.Join(parts, ", ")
	}
	if kind == GitRepositoryKind {
		s.Git = &GitSpec{}
		if ref := spec.object("ref"); ref != nil {
			var parts []string
			for _, k := range []string{"branch", "tag", "semver", "name", "commit"} {
				if v := ref.str(k); v != "" {
					parts = append(parts, k+" "+v)
				}
			}
			s.GitRef = strings.Join(parts, ", ")
			s.Git.Branch, s.Git.Tag, s.Git.SemVer, s.Git.Name, s.Git.Commit = ref.str("branch"), ref.str("tag"), ref.str("semver"), ref.str("name"), ref.str("commit")
		}
		if ref := spec.object("secretRef"); ref != nil {
			s.Git.SecretName = ref.str("name")
		}
		if spec.has("ignore") {
			ignore := spec.str("ignore")
			s.Git.Ignore = &ignore
		}
		for _, k := range []string{"include", "sparseCheckout", "proxySecretRef", "verify"} {
			if spec.has(k) {
				s.Git.Unsupported = append(s.Git.Unsupported, "spec."+k)
			}
		}
		if spec.boolean("recurseSubmodules") {
			s.Git.Unsupported = append(s.Git.Unsupported, "spec.recurseSubmodules")
		}
		switch p := spec.str("provider"); p {
		case "", "generic":
		case "github":
			s.Git.Provider = p
		default:
			s.Git.Unsupported = append(s.Git.Unsupported, "spec.provider "+p)
		}
	}
	return s
}

// ociSpec reads what pulling an OCIRepository takes of its spec.
func (d *decoder) ociSpec(spec *fields) *OCISpec {
	o := &OCISpec{}
	if ref := spec.object("ref"); ref != nil {
		o.Digest, o.SemVer, o.SemVerFilter, o.Tag = ref.str("digest"), ref.str("semver"), ref.str("semverFilter"), ref.str("tag")
	}
	if sel := spec.object("layerSelector"); sel != nil {
		o.MediaType, o.Operation = sel.str("mediaType"), sel.str("operation")
	}
	if ref := spec.object("secretRef"); ref != nil {
		o.SecretName = ref.str("name")
	}
	o.Insecure = spec.boolean("insecure")
	if spec.has("ignore") {
		ignore := spec.str("ignore")
		o.Ignore = &ignore
	}
	for _, k := range []string{"certSecretRef", "proxySecretRef", "serviceAccountName"} {
		if spec.has(k) {
			o.Unsupported = append(o.Unsupported, "spec."+k)
		}
	}
	if v := spec.object("verify"); v != nil {
		if p := v.str("provider"); p != "cosign" {
			o.Unsupported = append(o.Unsupported, "spec.verify.provider "+p)
		} else {
			o.Verify = d.verify(v, spec.at("verify"))
		}
	}
	o.Provider = spec.str("provider")
	return o
}

// verify reads spec.verify (at) with provider cosign.
func (d *decoder) verify(v *fields, at string) *Verify {
	out := &Verify{}
	if ref := v.object("secretRef"); ref != nil {
		out.SecretName = ref.str("name")
	}
	for i, n := range v.list("matchOIDCIdentity") {
		f := d.mapping(index(at+".matchOIDCIdentity", i), n)
		if f == nil {
			continue
		}
		id := OIDCIdentity{Issuer: f.str("issuer"), Subject: f.str("subject")}
		for _, kv := range [][2]string{{"issuer", id.Issuer}, {"subject", id.Subject}} {
			key, re := kv[0], kv[1]
			if re == "" {
				f.missing(key)
			} else if _, err := regexp.Compile(re); err != nil {
				f.invalid(key, "not a regular expression: %v", err)
			}
		}
		out.MatchOIDCIdentity = append(out.MatchOIDCIdentity, id)
	}
	return out
}

// chartSpec reads a HelmChart's spec.
func (d *decoder) chartSpec(spec *fields) *ChartSpec {
	c := &ChartSpec{Chart: spec.str("chart"), Version: spec.str("version"), IgnoreMissingValuesFiles: spec.boolean("ignoreMissingValuesFiles")}
	if ref := spec.object("sourceRef"); ref != nil {
		c.SourceKind, c.SourceName = ref.str("kind"), ref.str("name")
	}
	for _, n := range spec.list("valuesFiles") {
		if n.Kind == yaml.ScalarNode {
			c.ValuesFiles = append(c.ValuesFiles, n.Value)
		}
	}
	if f := spec.str("valuesFile"); f != "" && len(c.ValuesFiles) == 0 {
		c.ValuesFiles = []string{f}
	}
	if spec.has("verify") {
		c.Unsupported = append(c.Unsupported, "spec.verify")
	}
	return c
}

// helmSpec reads what fetching a HelmRepository's charts takes of its
// spec.
func (d *decoder) helmSpec(spec *fields) *HelmSpec {
	h := &HelmSpec{OCI: spec.str("type") == "oci", Provider: spec.str("provider"),
		PassCredentials: spec.boolean("passCredentials"), Insecure: spec.boolean("insecure")}
	if ref := spec.object("secretRef"); ref != nil {
		h.SecretName = ref.str("name")
	}
	if ref := spec.object("certSecretRef"); ref != nil {
		h.CertSecretName = ref.str("name")
	}
	for _, k := range []string{"proxySecretRef", "accessFrom"} {
		if spec.has(k) {
			h.Unsupported = append(h.Unsupported, "spec."+k)
		}
	}
	return h
}

var alias = regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$`)

// generator reads an ArtifactGenerator. What kustomize-deploy performs
// (its copy operations) is checked, and a pathPattern's captures, as far
// as can be told before its source is read.
func (d *decoder) generator(top *fields, apiVersion string) *Generator {
	d.object = artifactGeneratorKind
	if apiVersion != extensionsGroup+"/v1beta1" {
		d.add(top.lines["apiVersion"], "apiVersion", fmt.Sprintf("%q is not a version kustomize-deploy reads: use %s/v1beta1", apiVersion, extensionsGroup))
		return nil
	}
	g := &Generator{Ref: d.metadata(top)}
	spec := top.object("spec")
	if spec == nil {
		if !top.has("spec") {
			top.missing("spec")
		}
		return g
	}
	aliases := map[string]bool{}
	for i, n := range spec.list("sources") {
		f := d.mapping(index(spec.at("sources"), i), n)
		if f == nil {
			continue
		}
		src := GeneratorSource{Alias: f.str("alias"), Source: SourceRef{Kind: f.str("kind"), Name: f.str("name"), Namespace: f.str("namespace")}}
		if src.Source.Namespace == "" {
			src.Source.Namespace = g.Ref.Namespace
		}
		for _, k := range []string{"alias", "kind", "name"} {
			if f.str(k) == "" {
				f.missing(k)
			}
		}
		if src.Alias != "" && !alias.MatchString(src.Alias) {
			f.invalid("alias", "%q is not an alias: lower-case letters, digits, - and _", src.Alias)
		}
		if aliases[src.Alias] {
			f.invalid("alias", "%q is defined twice", src.Alias)
		}
		aliases[src.Alias] = true
		f.done()
		g.Sources = append(g.Sources, src)
	}
	if !spec.has("sources") {
		spec.missing("sources")
	}
	for i, n := range spec.list("artifacts") {
		f := d.mapping(index(spec.at("artifacts"), i), n)
		if f == nil {
			continue
		}
		a := Artifact{Name: f.str("name"), Revision: f.str("revision"), OriginRevision: f.str("originRevision")}
		if a.Name == "" {
			f.missing("name")
		}
		for _, k := range []string{"revision", "originRevision"} {
			if v := f.str(k); v != "" && !aliases[strings.TrimPrefix(v, "@")] {
				f.invalid(k, "%q names no alias of spec.sources (write \"@alias\")", v)
			}
		}
		for j, cn := range f.list("copy") {
			c := d.mapping(index(f.at("copy"), j), cn)
			if c == nil {
				continue
			}
			op := Copy{From: c.str("from"), To: c.str("to"), Strategy: c.oneOf("strategy", StrategyOverwrite, StrategyMerge, StrategyExtract)}
			c.eachString("exclude", func(_ int, s string, _ int) { op.Exclude = append(op.Exclude, s) })
			switch from, _, _ := strings.Cut(strings.TrimPrefix(op.From, "@"), "/"); {
			case op.From == "":
				c.missing("from")
			case !strings.HasPrefix(op.From, "@") || !strings.Contains(op.From, "/"):
				c.invalid("from", "%q is not @alias/path", op.From)
			case !aliases[from]:
				c.invalid("from", "%q names no alias of spec.sources", op.From)
			}
			switch {
			case op.To == "":
				c.missing("to")
			case !strings.HasPrefix(op.To, "@artifact/"):
				c.invalid("to", "%q is not @artifact/path", op.To)
			}

			if op.Strategy == "" {
				op.Strategy = StrategyOverwrite
			}
			c.done()
			a.Copy = append(a.Copy, op)
		}
		if len(a.Copy) == 0 {
			f.missing("copy")
		}
		f.done()
		g.Artifacts = append(g.Artifacts, a)
	}
	if !spec.has("artifacts") {
		spec.missing("artifacts")
	}
	if text := spec.str("pathPattern"); text != "" {
		p, err := ParsePathPattern(text)
		switch {
		case err != nil:
			spec.invalid("pathPattern", "%v", err)
		case !aliases[p.Alias]:
			spec.invalid("pathPattern", "%q names no alias of spec.sources", text)
		default:
			g.PathPattern = p
			// Every template renders with the captures (their names as
			// values): one naming another capture fails here, not per
			// directory.
			captures := map[string]string{}
			for _, n := range p.Names {
				captures[n] = "x"
			}
			if _, err := g.ArtifactsFor(captures); err != nil {
				spec.invalid("artifacts", "%v", err)
			}
		}
	}
	return g
}
