package units

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
)

// Identity is what tells this repository (the checkout) apart from
// others, for a GitRepository's spec.url to be compared with.
type Identity struct {
	// Remote is the checkout's origin URL, without credentials
	// (checkout.Origin).
	Remote string
	// GitHubServer (GITHUB_SERVER_URL, "https://github.com" when empty)
	// and GitHubRepository (GITHUB_REPOSITORY, "owner/name"): the
	// repository a GitHub Actions run is for.
	GitHubServer, GitHubRepository string
}

// Known says whether id can tell any repository.
func (id Identity) Known() bool { return id.Remote != "" || id.GitHubRepository != "" }

// String names the identity in messages, without credentials.
func (id Identity) String() string {
	var names []string
	if id.Remote != "" {
		names = append(names, "remote origin "+id.Remote)
	}
	if id.GitHubRepository != "" {
		names = append(names, "GITHUB_REPOSITORY "+id.GitHubRepository)
	}
	if len(names) == 0 {
		return "no remote origin, no GITHUB_REPOSITORY"
	}
	return strings.Join(names, ", ")
}

// Matches says whether the Git URL u names this repository: the same
// host (any case, any port) and path (any case, without a trailing .git
// or /), whatever the form: https://, ssh://, git@host:path (scp-like),
// file:// or a local path.
func (id Identity) Matches(u string) bool {
	want, ok := repoKey(u)
	if !ok {
		return false
	}
	if key, ok := repoKey(id.Remote); ok && key == want {
		return true
	}
	if id.GitHubRepository != "" {
		server := id.GitHubServer
		if server == "" {
			server = "https://github.com"
		}
		if key, ok := repoKey(strings.TrimSuffix(server, "/") + "/" + id.GitHubRepository); ok && key == want {
			return true
		}
	}
	return false
}

// repoKey normalises a Git URL to "host/path", lower-cased: hosting
// services route paths without case, and a host's case never counts.
func repoKey(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", false
	}
	var host, p string
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return "", false
		}
		if u.Scheme == "file" {
			host, p = "", u.Path
		} else {
			host, p = u.Hostname(), u.Path
		}
	case strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "."):
		p = raw // a local path, as git takes one
	default:
		// scp-like: [user@]host:path, the host without a slash before
		// the colon.
		before, after, ok := strings.Cut(raw, ":")
		if !ok || strings.Contains(before, "/") {
			return "", false
		}
		if i := strings.LastIndex(before, "@"); i >= 0 {
			before = before[i+1:]
		}
		host, p = before, after
	}
	if host == "" && !strings.HasPrefix(p, "/") {
		return "", false
	}
	p = strings.TrimSuffix(strings.Trim(path.Clean("/"+p), "/"), ".git")
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "", false
	}
	return strings.ToLower(host) + "/" + strings.ToLower(p), true
}

// ParseSource reads a mapping of a source to a directory checked out by
// the user, KIND/NAMESPACE/NAME=DIR (as --source and the action's
// sources input take it).
func ParseSource(s string) (config.SourceRef, string, error) {
	ref, dir, ok := strings.Cut(s, "=")
	parts := strings.Split(strings.TrimSpace(ref), "/")
	if !ok || len(parts) != 3 || slices.Contains(parts, "") || strings.TrimSpace(dir) == "" {
		return config.SourceRef{}, "", fmt.Errorf("want KIND/NAMESPACE/NAME=DIR (e.g. GitRepository/flux-system/podinfo=../podinfo), got %q", s)
	}
	switch parts[0] {
	case config.GitRepositoryKind, config.OCIRepositoryKind, config.BucketKind, config.ExternalArtifactKind:
	default:
		return config.SourceRef{}, "", fmt.Errorf("%q: the kind is GitRepository, OCIRepository, Bucket or ExternalArtifact, not %q", s, parts[0])
	}
	return config.SourceRef{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, strings.TrimSpace(dir), nil
}

// SourceError is a unit whose sourceRef names nothing kustomize-deploy
// can build: another repository not mapped to a directory, a source not
// among the configuration's objects, a kind it does not fetch. The unit
// fails (ArtifactFailed, as Flux's kustomize-controller fails a
// Kustomization whose source it cannot get) and nothing is built in its
// name, from this checkout least of all.
type SourceError struct {
	// Unit is the Kustomization, Source its sourceRef (or, for an
	// artifact, the generator's source at fault).
	Unit   *config.Unit
	Source config.SourceRef
	// Why says what is wrong, naming the source's file and URL.
	Why string
}

func (e *SourceError) Error() string {
	return fmt.Sprintf("Kustomization %s (%s:%d): spec.sourceRef %s: %s; nothing is built from this checkout in its stead: check it out and map it with --source %s=DIR (the action's input sources: one %s=DIR line)",
		e.Unit.Ref, e.Unit.File, e.Unit.Line, e.Unit.Source, e.Why, e.Source, e.Source)
}

// source is what a unit's sourceRef resolved to.
type source struct {
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
	Generated *generated
}

// resolver resolves units' sourceRefs, making ArtifactGenerators' artifacts
// in a scratch directory (once each) that Close removes. It is safe for
// concurrent use.
type resolver struct {
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
}

type artifactResult struct {
	src source
	err error
}

// resolve returns what unit u builds from.
func (r *resolver) resolve(ctx context.Context, u *config.Unit) (source, error) {
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
	case config.ExternalArtifactKind:
		return r.artifact(ctx, u, ref)
	default:
		return source{}, &SourceError{Unit: u, Source: ref, Why: fmt.Sprintf(
			"kustomize-deploy does not fetch %s artifacts yet (pull it, e.g. with flux pull artifact, and map the directory)", ref.Kind)}
	}
}

// git resolves a GitRepository, named in file: the checkout when it is
// this repository, else an error.
func (r *resolver) git(ctx context.Context, u *config.Unit, ref config.SourceRef, file string) (source, error) {
	if dir, ok := r.mapped[ref]; ok {
		r.unverified(ref, dir, feedsManifests)
		return r.mappedDir(ctx, dir)
	}
	checkoutSource := source{Root: r.root, Checkout: true, Revision: r.revision, RevisionTime: r.revisionTime}
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
		return source{}, &SourceError{Unit: u, Source: ref, Why: fmt.Sprintf(
			"GitRepository %s/%s is not among the configuration's objects (%s), so which repository it is cannot be told", ref.Namespace, ref.Name, file)}
	case r.fetcher != nil:
		return r.fetchGit(ctx, u, ref, gr)
	case !r.identity.Known():
		return source{}, &SourceError{Unit: u, Source: ref, Why: fmt.Sprintf(
			"GitRepository %s/%s (%s:%d) is %s, and this checkout has no remote origin (nor GITHUB_REPOSITORY) to tell whether it is that repository", ref.Namespace, ref.Name, gr.File, gr.Line, describe(gr))}
	}
	return source{}, &SourceError{Unit: u, Source: ref, Why: fmt.Sprintf(
		"GitRepository %s/%s (%s:%d) is another repository: %s, not this checkout (%s)", ref.Namespace, ref.Name, gr.File, gr.Line, describe(gr), r.identity)}
}

// describe names a source by its URL (credentials left out: a URL may
// carry a token) and ref.
func describe(s *config.Source) string {
	if s.URL == "" {
		return "of no spec.url"
	}
	u := userinfo.ReplaceAllString(s.URL, "$1")
	if s.GitRef != "" {
		return u + " at " + s.GitRef
	}
	return u
}

var userinfo = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*://)[^@/]+@`)

// mappedDir is a directory the user checked out for a source: its
// revision is its git HEAD, else "(mapped DIR)".
func (r *resolver) mappedDir(ctx context.Context, dir string) (source, error) {
	s := source{Root: dir, Revision: "(mapped " + dir + ")"}
	if head, err := checkout.Git(ctx, dir, "rev-parse", "HEAD"); err == nil && head != "" {
		s.Revision = head
		if out, err := checkout.Git(ctx, dir, "show", "-s", "--format=%cI", "HEAD", "--"); err == nil {
			s.RevisionTime, _ = time.Parse(time.RFC3339, out)
		}
	}
	return s, nil
}

// note records a note once per key.
func (r *resolver) note(key, text string) {
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
func (r *resolver) Notes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notes)
}

// artifact makes the ExternalArtifact ref from its generator's sources,
// once, and returns it.
func (r *resolver) artifact(ctx context.Context, u *config.Unit, ref config.SourceRef) (source, error) {
	key := config.Ref{Namespace: ref.Namespace, Name: ref.Name}
	gen, art := r.set.Artifact(key)
	if gen == nil {
		return source{}, &SourceError{Unit: u, Source: ref, Why: fmt.Sprintf(
			"no ArtifactGenerator among the configuration's objects makes ExternalArtifact %s (an artifact of spec.artifacts, in the generator's namespace)", key)}
	}
	r.artMu.Lock()
	defer r.artMu.Unlock()
	if got, ok := r.artifacts[key]; ok {
		var se *SourceError
		if errors.As(got.err, &se) { // the same failure, for this unit
			return source{}, &SourceError{Unit: u, Source: se.Source, Why: se.Why}
		}
		return got.src, got.err
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
func (r *resolver) generate(ctx context.Context, u *config.Unit, gen *config.Generator, art *config.Artifact) (source, error) {
	where := fmt.Sprintf("ArtifactGenerator %s (%s:%d)", gen.Ref, gen.File, gen.Line)
	roots := map[string]string{}
	revs := map[string]source{}
	fromCheckout := true
	for _, s := range gen.Sources {
		var src source
		var err error
		if dir, ok := r.mapped[s.Source]; ok {
			src, err = r.mappedDir(ctx, dir)
		} else if s.Source.Kind == config.GitRepositoryKind {
			src, err = r.git(ctx, u, s.Source, gen.File)
		} else if s.Source.Kind == config.OCIRepositoryKind {
			src, err = r.oci(ctx, u, s.Source, gen.File)
		} else {
			err = &SourceError{Unit: u, Source: s.Source, Why: fmt.Sprintf(
				"%s: source %s is a %s, which kustomize-deploy does not fetch yet", where, s.Alias, s.Source.Kind)}
		}
		if err != nil {
			var se *SourceError
			if errors.As(err, &se) {
				se.Why = fmt.Sprintf("%s, source %s: %s", where, s.Alias, se.Why)
			}
			return source{}, err
		}
		roots[s.Alias], revs[s.Alias] = src.Root, src
		fromCheckout = fromCheckout && src.Checkout
	}
	if err := r.makeScratch(); err != nil {
		return source{}, err
	}
	dest := filepath.Join(r.scratch, gen.Ref.Namespace, art.Name)
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return source{}, err
	}
	if err := copyArtifact(ctx, art.Copy, roots, dest); err != nil {
		return source{}, &SourceError{Unit: u, Source: u.Source, Why: fmt.Sprintf("%s, artifact %s: %v", where, art.Name, err)}
	}
	out := source{Root: dest}
	if fromCheckout {
		out.Generated = &generated{gen: gen, art: art}
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
			return source{}, err
		}
		out.Revision = "latest@sha256:" + digest
	}
	return out, nil
}

// makeScratch makes the scratch tree artifacts are made in, once. Called
// with r.artMu held.
func (r *resolver) makeScratch() error {
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
func (r *resolver) Close() error {
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

// chartTree resolves the GitRepository ref a HelmRelease's chart comes
// from (spec.chart.spec.sourceRef) to its tree, as a unit's sourceRef
// is resolved: the directory mapped to it, this checkout when it is this
// repository, else the repository fetched (once per run, shared with
// the units built from it). Its errors name the GitRepository and how to
// map it.
func (r *resolver) chartTree(ctx context.Context, ref helm.Reference) (helm.GitTree, error) {
	sref := config.SourceRef{Kind: config.GitRepositoryKind, Namespace: ref.Namespace, Name: ref.Name}
	howToMap := fmt.Sprintf("check it out and map it with --source %s=DIR (the action's input sources: one %s=DIR line)", sref, sref)
	if dir, ok := r.mapped[sref]; ok {
		src, err := r.mappedDir(ctx, dir)
		tree := helm.GitTree{Dir: src.Root, Revision: src.Revision}
		if w := r.unverified(sref, dir, feedsCharts); w != "" {
			tree.Notes = []string{w}
		}
		return tree, err
	}
	this := helm.GitTree{Dir: r.root, Revision: r.revision}
	gr := r.set.Source(config.GitRepositoryKind, config.Ref{Namespace: ref.Namespace, Name: ref.Name})
	switch {
	case gr == nil && ref.Name == "flux-system":
		return this, nil // what flux bootstrap names the repository it syncs from
	case gr == nil:
		return helm.GitTree{}, fmt.Errorf("GitRepository %s/%s is not among the configuration's objects, so which repository it is cannot be told: %s", ref.Namespace, ref.Name, howToMap)
	case r.identity.Matches(gr.URL) || slices.Contains(r.set.SyncSources(), sref):
		return this, nil
	case r.fetcher == nil:
		return helm.GitTree{}, fmt.Errorf("GitRepository %s/%s (%s:%d) is another repository, %s, and fetching sources is off (--fetch-sources=false, the action's input fetch-sources): %s",
			ref.Namespace, ref.Name, gr.File, gr.Line, describe(gr), howToMap)
	}
	src, err := r.fetchGitOnce(ctx, sref, gr)
	if err != nil {
		return helm.GitTree{}, fmt.Errorf("%w; or %s", err, howToMap)
	}
	return helm.GitTree{Dir: src.Root, Revision: src.Revision}, nil
}
