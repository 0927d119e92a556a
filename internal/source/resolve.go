package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ecr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gitsource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// Error is a source that does not resolve to a tree: another repository
// not mapped to a directory and not fetched, a source not among the
// configuration's objects, a kind not fetched, a fetch that failed.
// Nothing is built from this checkout in its stead.
type Error struct {
	// Source is the source at fault (for an artifact, the generator's
	// source at fault).
	Source config.SourceRef
	// Why says what is wrong, naming the source's file and URL.
	Why string
	// Fix is what gets past it: each front end names its own flag or
	// input for it.
	Fix Fix
	// Err is the failure Why says, when there is one to tell apart (a
	// *fetch.MissingError: an object the credentials are read from that
	// does not exist yet).
	Err error
}

func (e *Error) Error() string { return e.Why }
func (e *Error) Unwrap() error { return e.Err }

// Fix is what gets a source past a failure. The engine's messages name
// no flag or input: each front end says how to give a Fix in its own
// words (see pipeline.Fix).
type Fix string

// The fixes a source's failure may name.
const (
	// FixMapSource maps a directory the user checked out to the source.
	FixMapSource Fix = "map-source"
	// FixFetchSources turns fetching (and pulling) sources back on.
	FixFetchSources Fix = "fetch-sources"
	// FixGitSecret and FixOCISecret give the Secret a GitRepository's or
	// an OCIRepository's spec.secretRef names.
	FixGitSecret Fix = "git-secret"
	FixOCISecret Fix = "oci-secret"
	// FixGitHubToken gives the run the job's GitHub token, which a
	// GitRepository with provider github is fetched with.
	FixGitHubToken Fix = "github-token"
)

// fixError is an error with the Fix that gets past it.
type fixError struct {
	err error
	fix Fix
}

func (e *fixError) Error() string { return e.err.Error() }
func (e *fixError) Unwrap() error { return e.err }

// FixOf is the Fix err names (through any wrapping), "" for none.
func FixOf(err error) Fix {
	var se *Error
	if errors.As(err, &se) && se.Fix != "" {
		return se.Fix
	}
	var fe *fixError
	if errors.As(err, &fe) {
		return fe.fix
	}
	return ""
}

// Tree is what a source resolved to: a directory and its revision.
type Tree struct {
	// Root is the directory spec.path is relative to, absolute with
	// symlinks evaluated.
	Root string
	// Checkout says Root is the checkout's: the run's revision, file
	// listing and base revision apply.
	Checkout bool
	// Revision, with RevisionTime (zero when unknown), is the source's
	// revision, recorded in the inventory.
	Revision     string
	RevisionTime time.Time
	// Generated, for an artifact made from the checkout alone, makes it
	// again at another revision (see artifactAt).
	Generated *Generated
	// Notes are what a release rendered from the tree says of it (a
	// signature its mapped directory stood in for, unchecked).
	Notes []string
}

// Options say what a run's sources resolve against.
type Options struct {
	// Set is the configuration read (its sources, generators and sync).
	Set *config.Set
	// Root is the checkout's root; Revision and RevisionTime its
	// revision.
	Root         string
	Revision     string
	RevisionTime time.Time
	// Identity tells this repository apart; Mapped are the directories
	// the user checked out for sources.
	Identity Identity
	Mapped   map[config.SourceRef]string
	// Fetch fetches the GitRepositories that are other repositories and
	// pulls the OCIRepositories, not mapped; GitSecrets and OCISecrets
	// stand in for the Secrets their spec.secretRef names. Without Fetch
	// they fail.
	Fetch      bool
	GitSecrets map[string]gitsource.Auth
	OCISecrets map[string]ocisource.Auth
	// Secrets reads the Secrets a source's spec.secretRef names that
	// are not given by name: the configuration's files (SOPS-decrypted),
	// else the cluster. Nil reads none. Mask is handed every secret value
	// read that way.
	Secrets fetch.SecretLookup
	// Accounts reads the pull secrets of the ServiceAccount an
	// OCIRepository's spec.serviceAccountName names (nil: none).
	Accounts fetch.AccountLookup
	Mask     func([]string)
	// AWS logs in to ECR for an OCIRepository with provider aws (nil
	// refuses it); Offline says the run is an offline diff, whose login
	// takes only the environment's credentials. Transport reaches
	// registries (nil: the default).
	// GitHubToken is the job's GitHub token: a GitRepository with
	// provider github is fetched with it, from GitHubServer (the job's,
	// e.g. https://github.com) only.
	GitHubToken, GitHubServer string
	AWS                       func(ctx context.Context, host string, o ecr.Options) (username, password string, err error)
	GCP                       func(ctx context.Context, host string, envOnly bool) (username, password string, err error)
	Azure                     func(ctx context.Context, host string, envOnly bool) (username, password string, err error)
	Offline                   func() bool
	Transport                 http.RoundTripper
	// Sigstore is the trust keyless signatures (spec.verify without a
	// secretRef) are verified against; the zero value is Sigstore's
	// public good.
	Sigstore ocisource.Sigstore
}

// NewResolver resolves the sources of o.Set; Close removes what it made.
func NewResolver(o Options) *Resolver {
	r := &Resolver{set: o.Set, root: o.Root, identity: o.Identity, mapped: o.Mapped, revision: o.Revision, revisionTime: o.RevisionTime}
	if o.Fetch {
		r.fetcher = &fetcher{secrets: o.GitSecrets, ociSecrets: o.OCISecrets, lookup: o.Secrets, accounts: o.Accounts, mask: o.Mask,
			githubToken: o.GitHubToken, githubServer: o.GitHubServer,
			aws: o.AWS, gcp: o.GCP, azure: o.Azure, offline: o.Offline, transport: o.Transport, sigstore: o.Sigstore}
	}
	return r
}

// Resolver resolves units' sourceRefs, making ArtifactGenerators' artifacts
// in a scratch directory (once each) that Close removes. It is safe for
// concurrent use.
type Resolver struct {
	set      *config.Set
	root     string // the checkout's root
	identity Identity
	mapped   map[config.SourceRef]string
	// revision and revisionTime are the checkout's.
	revision     string
	revisionTime time.Time

	// fetcher, when set, fetches GitRepositories that are other
	// repositories, not mapped (see fetchGit); nil leaves them failing.
	fetcher *fetcher

	// artMu guards the artifacts made, mu the notes.
	artMu     sync.Mutex
	scratch   string
	artifacts map[config.Ref]artifactResult
	mu        sync.Mutex
	notes     []string
	warnings  []string
	noted     map[string]bool

	// baseArtifacts are the artifacts made at other revisions (see
	// artifactAt), "" for one not made there; guarded by artMu.
	baseArtifacts map[baseArtifact]string
	// againArtifacts are the artifacts made again at a unit's turn (see
	// Again); guarded by artMu.
	againArtifacts map[config.Ref]bool
}

type artifactResult struct {
	src Tree
	err error
}

// Again resolves unit u's source again, at u's turn, when resolving it
// as the configuration opened found an object its credentials are read
// from missing (a *fetch.MissingError): one the configuration creates in
// a unit that runs before u. What failed so is forgotten, once per
// source and run, so that it is fetched now, at most once, for every
// unit that names it; what resolved stays as it was. An artifact's
// generator sources are forgotten with it.
func (r *Resolver) Again(ctx context.Context, u *config.Unit) (Tree, error) {
	ref := u.Source
	if ref.Kind == config.ExternalArtifactKind {
		key := config.Ref{Namespace: ref.Namespace, Name: ref.Name}
		r.artMu.Lock()
		var missing *fetch.MissingError
		if got, ok := r.artifacts[key]; ok && !r.againArtifacts[key] && errors.As(got.err, &missing) {
			delete(r.artifacts, key)
			if gen, _ := r.set.Artifact(key); gen != nil {
				for _, s := range gen.Sources {
					r.fetcher.again(s.Source)
				}
			}
			if r.againArtifacts == nil {
				r.againArtifacts = map[config.Ref]bool{}
			}
			r.againArtifacts[key] = true
		}
		r.artMu.Unlock()
	} else {
		r.fetcher.again(ref)
	}
	return r.Resolve(ctx, u)
}

// resolve returns what unit u builds from.
func (r *Resolver) Resolve(ctx context.Context, u *config.Unit) (Tree, error) {
	ref := u.Source
	if dir, ok := r.mapped[ref]; ok {
		r.unverified(ref, dir, feedsManifests)
		return r.mappedDir(ctx, dir)
	}
	switch ref.Kind {
	case config.GitRepositoryKind:
		return r.git(ctx, u, ref, u.File)
	case config.OCIRepositoryKind:
		return r.oci(ctx, u, ref, u.File)
	case config.BucketKind:
		return r.bucket(ctx, ref, u.File)
	case config.ExternalArtifactKind:
		return r.artifact(ctx, u, ref)
	default:
		return Tree{}, &Error{Source: ref, Why: fmt.Sprintf(
			"kustomize-deploy does not fetch %s artifacts yet (pull it, e.g. with flux pull artifact, and map the directory)", ref.Kind)}
	}
}

// git resolves a GitRepository, named in file: the checkout when it is
// this repository, else an error.
func (r *Resolver) git(ctx context.Context, u *config.Unit, ref config.SourceRef, file string) (Tree, error) {
	if dir, ok := r.mapped[ref]; ok {
		r.unverified(ref, dir, feedsManifests)
		return r.mappedDir(ctx, dir)
	}
	checkoutSource := Tree{Root: r.root, Checkout: true, Revision: r.revision, RevisionTime: r.revisionTime}
	gr := r.set.Source(config.GitRepositoryKind, config.Ref{Namespace: ref.Namespace, Name: ref.Name})
	switch {
	case gr != nil && r.identity.Matches(gr.URL):
		return checkoutSource, nil
	case slices.Contains(r.set.SyncSources(), ref):
		if gr != nil && r.identity.Known() && !r.identity.Matches(gr.URL) {
			r.note(ref.String(), fmt.Sprintf("%s (%s:%d, %s) is taken as this checkout (%s): Flux's own sync applies this configuration from it (a fork or a mirror)",
				ref, gr.File, gr.Line, gr.URL, r.identity))
		}
		return checkoutSource, nil
	case gr == nil && ref.Name == "flux-system":
		r.note(ref.String(), fmt.Sprintf("%s is not among the configuration's objects: taken as this checkout, since flux-system is the name flux bootstrap gives the repository it syncs from", ref))
		return checkoutSource, nil
	case gr == nil:
		return Tree{}, &Error{Source: ref, Why: fmt.Sprintf(
			"GitRepository %s/%s is not among the configuration's objects (%s), so which repository it is cannot be told", ref.Namespace, ref.Name, file)}
	case r.fetcher != nil:
		return r.fetchGit(ctx, u, ref, gr)
	case !r.identity.Known():
		return Tree{}, &Error{Source: ref, Why: fmt.Sprintf(
			"GitRepository %s/%s (%s:%d) is %s, and this checkout has no remote origin (nor GITHUB_REPOSITORY) to tell whether it is that repository", ref.Namespace, ref.Name, gr.File, gr.Line, describe(gr))}
	}
	return Tree{}, &Error{Source: ref, Why: fmt.Sprintf(
		"GitRepository %s/%s (%s:%d) is another repository: %s, not this checkout (%s)", ref.Namespace, ref.Name, gr.File, gr.Line, describe(gr), r.identity)}
}

// describe names a source by its URL (credentials left out: a URL may
// carry a token) and ref.
func describe(s *config.Source) string {
	if s.URL == "" {
		return "of no spec.url"
	}
	u := fetch.Redact(s.URL)
	if s.GitRef != "" {
		return u + " at " + s.GitRef
	}
	return u
}

// mappedDir is a directory the user checked out for a source: its
// revision is its git HEAD, else "(mapped DIR)".
func (r *Resolver) mappedDir(ctx context.Context, dir string) (Tree, error) {
	s := Tree{Root: dir, Revision: "(mapped " + dir + ")"}
	if head, err := checkout.Git(ctx, dir, "rev-parse", "HEAD"); err == nil && head != "" {
		s.Revision = head
		if out, err := checkout.Git(ctx, dir, "show", "-s", "--format=%cI", "HEAD", "--"); err == nil {
			s.RevisionTime, _ = time.Parse(time.RFC3339, out)
		}
	}
	return s, nil
}

// note records a note once per key.
func (r *Resolver) note(key, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.noted == nil {
		r.noted = map[string]bool{}
	}
	if !r.noted[key] {
		r.noted[key] = true
		r.notes = append(r.notes, text)
	}
}

// Notes are what resolving said, one line each.
func (r *Resolver) Notes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notes)
}

// artifact makes the ExternalArtifact ref from its generator's sources,
// once, and returns it.
func (r *Resolver) artifact(ctx context.Context, u *config.Unit, ref config.SourceRef) (Tree, error) {
	key := config.Ref{Namespace: ref.Namespace, Name: ref.Name}
	r.artMu.Lock()
	defer r.artMu.Unlock()
	if got, ok := r.artifacts[key]; ok {
		return got.src, got.err
	}
	gen, art := r.set.Artifact(key)
	if gen == nil {
		var err error
		if gen, art, err = r.discovered(ctx, u, key); err != nil {
			return Tree{}, err
		}
	}
	if gen == nil {
		return Tree{}, &Error{Source: ref, Why: fmt.Sprintf(
			"no ArtifactGenerator among the configuration's objects makes ExternalArtifact %s (an artifact of spec.artifacts, in the generator's namespace, or one its spec.pathPattern finds)", key)}
	}
	src, err := r.generate(ctx, u, gen, art)
	if r.artifacts == nil {
		r.artifacts = map[config.Ref]artifactResult{}
	}
	r.artifacts[key] = artifactResult{src: src, err: err}
	return src, err
}

// generate performs the copy operations of art, of generator gen, into a
// directory of the scratch tree. Called with r.artMu held.
func (r *Resolver) generate(ctx context.Context, u *config.Unit, gen *config.Generator, art *config.Artifact) (Tree, error) {
	where := fmt.Sprintf("ArtifactGenerator %s (%s:%d)", gen.Ref, gen.File, gen.Line)
	roots := map[string]string{}
	revs := map[string]Tree{}
	fromCheckout := true
	for _, s := range gen.Sources {
		src, err := r.generatorSource(ctx, u, gen, s)
		if err != nil {
			return Tree{}, err
		}
		roots[s.Alias], revs[s.Alias] = src.Root, src
		fromCheckout = fromCheckout && src.Checkout
	}
	if err := r.makeScratch(); err != nil {
		return Tree{}, err
	}
	dest := filepath.Join(r.scratch, gen.Ref.Namespace, art.Name)
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return Tree{}, err
	}
	if err := copyArtifact(ctx, art.Copy, roots, dest); err != nil {
		return Tree{}, &Error{Source: config.SourceRef{Kind: config.ExternalArtifactKind, Namespace: gen.Ref.Namespace, Name: art.Name},
			Why: fmt.Sprintf("%s, artifact %s: %v", where, art.Name, err)}
	}
	out := Tree{Root: dest}
	if fromCheckout {
		out.Generated = &Generated{gen: gen, art: art}
	}
	// The revision recorded is a source's (the one spec.artifacts names
	// as its revision, else as its origin, else the only one), so that a
	// unit's revision stays a commit; else the artifact's digest, as
	// Flux's latest@sha256:... revision.
	pick := strings.TrimPrefix(art.Revision, "@")
	if pick == "" {
		pick = strings.TrimPrefix(art.OriginRevision, "@")
	}
	if pick == "" && len(gen.Sources) == 1 {
		pick = gen.Sources[0].Alias
	}
	if s, ok := revs[pick]; ok {
		out.Revision, out.RevisionTime = s.Revision, s.RevisionTime
	} else {
		digest, err := digestDir(dest)
		if err != nil {
			return Tree{}, err
		}
		out.Revision = "latest@sha256:" + digest
	}
	return out, nil
}

// generatorSource resolves source s of generator gen, its failure
// naming the generator and the alias.
func (r *Resolver) generatorSource(ctx context.Context, u *config.Unit, gen *config.Generator, s config.GeneratorSource) (Tree, error) {
	where := fmt.Sprintf("ArtifactGenerator %s (%s:%d)", gen.Ref, gen.File, gen.Line)
	var src Tree
	var err error
	if dir, ok := r.mapped[s.Source]; ok {
		src, err = r.mappedDir(ctx, dir)
	} else if s.Source.Kind == config.GitRepositoryKind {
		src, err = r.git(ctx, u, s.Source, gen.File)
	} else if s.Source.Kind == config.OCIRepositoryKind {
		src, err = r.oci(ctx, u, s.Source, gen.File)
	} else if s.Source.Kind == config.BucketKind {
		src, err = r.bucket(ctx, s.Source, gen.File)
	} else {
		err = &Error{Source: s.Source, Why: fmt.Sprintf(
			"%s: source %s is a %s, which kustomize-deploy does not fetch yet", where, s.Alias, s.Source.Kind)}
	}
	if err != nil {
		var se *Error
		if errors.As(err, &se) {
			se.Why = fmt.Sprintf("%s, source %s: %s", where, s.Alias, se.Why)
		}
		return Tree{}, err
	}
	return src, nil
}

// makeScratch makes the scratch tree artifacts are made in, once. Called
// with r.artMu held.
func (r *Resolver) makeScratch() error {
	if r.scratch != "" {
		return nil
	}
	dir, err := os.MkdirTemp("", "kustomize-deploy-artifacts-*")
	if err != nil {
		return err
	}
	r.scratch, err = filepath.EvalSymlinks(dir)
	return err
}

// Close removes the artifacts made and the sources fetched.
func (r *Resolver) Close() error {
	r.artMu.Lock()
	defer r.artMu.Unlock()
	ferr := r.fetcher.close()
	if r.scratch == "" {
		return ferr
	}
	err := os.RemoveAll(r.scratch)
	r.scratch, r.artifacts, r.baseArtifacts = "", nil, nil
	return errors.Join(err, ferr)
}

// ChartArtifact resolves the ExternalArtifact ref a HelmRelease's
// spec.chartRef names to its tree, made by its ArtifactGenerator once
// per run as a unit's is (the chart at its root, as helm-controller
// loads it).
func (r *Resolver) ChartArtifact(ctx context.Context, ref config.SourceRef) (Tree, error) {
	if dir, ok := r.mapped[ref]; ok {
		return r.mappedDir(ctx, dir)
	}
	return r.artifact(ctx, nil, ref)
}

// ChartTree resolves the GitRepository ref a HelmRelease's chart comes
// from (spec.chart.spec.sourceRef) to its tree, as a unit's sourceRef
// is resolved: the directory mapped to it, this checkout when it is this
// repository, else the repository fetched (once per run, shared with
// the units built from it). Its errors name the GitRepository and how to
// map it.
func (r *Resolver) ChartTree(ctx context.Context, ref config.SourceRef) (Tree, error) {
	sref := config.SourceRef{Kind: config.GitRepositoryKind, Namespace: ref.Namespace, Name: ref.Name}
	howToMap := "check it out and map it to the GitRepository"
	if dir, ok := r.mapped[sref]; ok {
		src, err := r.mappedDir(ctx, dir)
		if w := r.unverified(sref, dir, feedsCharts); w != "" {
			src.Notes = []string{w}
		}
		return src, err
	}
	this := Tree{Root: r.root, Checkout: true, Revision: r.revision, RevisionTime: r.revisionTime}
	gr := r.set.Source(config.GitRepositoryKind, config.Ref{Namespace: ref.Namespace, Name: ref.Name})
	switch {
	case gr == nil && ref.Name == "flux-system":
		return this, nil // what flux bootstrap names the repository it syncs from
	case gr == nil:
		return Tree{}, &Error{Source: sref, Fix: FixMapSource, Why: fmt.Sprintf("GitRepository %s/%s is not among the configuration's objects, so which repository it is cannot be told: %s", ref.Namespace, ref.Name, howToMap)}
	case r.identity.Matches(gr.URL) || slices.Contains(r.set.SyncSources(), sref):
		return this, nil
	case r.fetcher == nil:
		return Tree{}, &Error{Source: sref, Fix: FixFetchSources, Why: fmt.Sprintf("GitRepository %s/%s (%s:%d) is another repository, %s, and fetching sources is off: fetch it, or %s",
			ref.Namespace, ref.Name, gr.File, gr.Line, describe(gr), howToMap)}
	}
	src, err := r.fetchGitOnce(ctx, sref, gr)
	if err != nil {
		return Tree{}, &Error{Source: sref, Fix: cmp.Or(FixOf(err), FixMapSource), Why: fmt.Sprintf("%v; or %s", err, howToMap)}
	}
	return src, nil
}
