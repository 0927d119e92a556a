package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ecr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gitsource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// FetchTimeout bounds the fetch of one GitRepository (or the pull of
// one OCIRepository), and the fetch of every source the configuration
// names, all at once (see Resolver.prefetch).
const FetchTimeout = 2 * time.Minute

// fetchParallel bounds the sources fetched at once.
const fetchParallel = 8

// fetcher fetches the GitRepositories that are neither this repository
// nor mapped to a directory, and pulls the OCIRepositories not mapped,
// each once, into a scratch directory that Close removes. It is safe
// for concurrent use: sources are fetched in parallel, each once.
type fetcher struct {
	// secrets stand in for the Secrets a GitRepository's spec.secretRef
	// names, by name; ociSecrets for an OCIRepository's.
	secrets    map[string]gitsource.Auth
	ociSecrets map[string]ocisource.Auth
	// githubToken and githubServer are the job's (see
	// Options.GitHubToken).
	githubToken, githubServer string
	// sigstore is what keyless signatures are verified against.
	sigstore ocisource.Sigstore
	// appTokens are the GitHub App installation tokens minted, by App
	// installation (under mu).
	appTokens map[string]*appToken
	// timeout bounds one fetch, and the prefetch of all (FetchTimeout
	// when 0).
	timeout time.Duration
	// lookup reads the Secrets not given by name; mask is handed the
	// secret values of those read.
	lookup   fetch.SecretLookup
	accounts fetch.AccountLookup
	mask     func([]string)
	// aws logs in to ECR (provider aws); offline says the run is an
	// offline diff (the environment's credentials only); transport
	// reaches registries (nil: the default).
	aws       func(ctx context.Context, host string, o ecr.Options) (string, string, error)
	gcp       func(ctx context.Context, host string, envOnly bool) (string, string, error)
	azure     func(ctx context.Context, host string, envOnly bool) (string, string, error)
	offline   func() bool
	transport http.RoundTripper

	mu      sync.Mutex
	scratch string
	fetched map[config.SourceRef]*fetchOnce
	// deadline ends every prefetch: set by the first.
	deadline time.Time
}

// fetchOnce is one source's fetch, shared by every unit (and chart) that
// names it.
type fetchOnce struct {
	once sync.Once
	res  fetchResult
	// again says it was made at a unit's turn, in place of one that
	// found an object its credentials are read from missing (see again).
	again bool
}

type fetchResult struct {
	src Tree
	err error
	// origin says where a pulled artifact's content comes from, for the
	// note.
	origin string
}

// once runs get for ref unless it ran already, and returns its result.
func (f *fetcher) once(ref config.SourceRef, get func() fetchResult) fetchResult {
	f.mu.Lock()
	if f.fetched == nil {
		f.fetched = map[config.SourceRef]*fetchOnce{}
	}
	e := f.fetched[ref]
	if e == nil {
		e = &fetchOnce{}
		f.fetched[ref] = e
	}
	f.mu.Unlock()
	e.once.Do(func() { e.res = get() })
	return e.res
}

// again forgets ref's fetch when it failed for an object its
// credentials are read from that was missing (a *fetch.MissingError:
// nothing was fetched), so that the next call fetches it: once per run,
// shared by every unit that calls again for it. Called only once the
// fetches of the configuration's opening have ended (at a unit's turn),
// so the result it reads is settled.
func (f *fetcher) again(ref config.SourceRef) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.fetched[ref]
	var missing *fetch.MissingError
	if e != nil && !e.again && errors.As(e.res.err, &missing) {
		f.fetched[ref] = &fetchOnce{again: true}
	}
}

func (f *fetcher) limit() time.Duration {
	if f.timeout > 0 {
		return f.timeout
	}
	return FetchTimeout
}

// fetchGit fetches GitRepository gr (ref), for unit u, once: its tree
// is what u builds, its revision the one recorded.
func (r *Resolver) fetchGit(ctx context.Context, u *config.Unit, ref config.SourceRef, gr *config.Source) (Tree, error) {
	src, err := r.fetchGitOnce(ctx, ref, gr)
	if err != nil {
		return Tree{}, &Error{Source: ref, Why: err.Error(), Fix: FixOf(err), Err: err}
	}
	return src, nil
}

// fetchGitOnce fetches GitRepository gr (ref) once per run, for a unit
// or a HelmRelease's chart alike: its errors name the GitRepository.
func (r *Resolver) fetchGitOnce(ctx context.Context, ref config.SourceRef, gr *config.Source) (Tree, error) {
	got := r.fetcher.once(ref, func() fetchResult {
		src, err := r.fetcher.fetch(ctx, ref, gr)
		return fetchResult{src: src, err: err}
	})
	if got.err != nil {
		return Tree{}, got.err
	}
	r.note("fetched "+ref.String(), fmt.Sprintf("%s (%s:%d) is another repository, fetched from %s: revision %s", ref, gr.File, gr.Line, fetch.Redact(gr.URL), got.src.Revision))
	return got.src, nil
}

// prefetch fetches, all at once, every GitRepository and OCIRepository
// the configuration's units and ArtifactGenerators name that is fetched
// at all (not mapped, not this repository), within one deadline for
// them all, set by the first prefetch of the run: N sources that never
// answer take one FetchTimeout, not N. What fails is said when a unit
// resolves its source; nothing is noted here.
func (r *Resolver) Prefetch(ctx context.Context) {
	f := r.fetcher
	if f == nil {
		return
	}
	var refs []config.SourceRef
	add := func(ref config.SourceRef) {
		if _, ok := r.mapped[ref]; ok || slices.Contains(refs, ref) {
			return
		}
		switch ref.Kind {
		case config.GitRepositoryKind:
			gr := r.set.Source(config.GitRepositoryKind, config.Ref{Namespace: ref.Namespace, Name: ref.Name})
			if gr == nil || r.identity.Matches(gr.URL) || slices.Contains(r.set.SyncSources(), ref) {
				return
			}
		case config.OCIRepositoryKind, config.BucketKind:
			if r.set.Source(ref.Kind, config.Ref{Namespace: ref.Namespace, Name: ref.Name}) == nil {
				return
			}
		default:
			return
		}
		refs = append(refs, ref)
	}
	for _, u := range r.set.Units {
		add(u.Source)
	}
	for _, g := range r.set.Generators {
		for _, s := range g.Sources {
			add(s.Source)
		}
	}
	if len(refs) == 0 {
		return
	}
	f.mu.Lock()
	if f.deadline.IsZero() {
		f.deadline = time.Now().Add(f.limit())
	}
	deadline := f.deadline
	f.mu.Unlock()
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	sem := make(chan struct{}, fetchParallel)
	var wg sync.WaitGroup
	for _, ref := range refs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			s := r.set.Source(ref.Kind, config.Ref{Namespace: ref.Namespace, Name: ref.Name})
			if ref.Kind == config.BucketKind {
				f.once(ref, func() fetchResult {
					src, err := f.download(ctx, ref, s)
					return fetchResult{src: src, err: err}
				})
				return
			}
			if ref.Kind == config.GitRepositoryKind {
				f.once(ref, func() fetchResult {
					src, err := f.fetch(ctx, ref, s)
					return fetchResult{src: src, err: err}
				})
				return
			}
			f.once(ref, func() fetchResult {
				res, err := f.pull(ctx, ref, s)
				res.err = err
				return res
			})
		}()
	}
	wg.Wait()
}

// fetch fetches gr into the scratch directory. Its errors name the
// GitRepository, its URL (without credentials) and ref.
func (f *fetcher) fetch(ctx context.Context, ref config.SourceRef, gr *config.Source) (Tree, error) {
	g := gr.Git
	if g == nil {
		g = &config.GitSpec{}
	}
	gref := gitsource.Ref{Branch: g.Branch, Tag: g.Tag, SemVer: g.SemVer, Name: g.Name, Commit: g.Commit}
	where := fmt.Sprintf("GitRepository %s/%s (%s:%d, %s at %s)", ref.Namespace, ref.Name, gr.File, gr.Line, fetch.Redact(gr.URL), gref)
	if len(g.Unsupported) > 0 {
		return Tree{}, fmt.Errorf("%s sets %s, which kustomize-deploy does not honour when it fetches a repository", where, strings.Join(g.Unsupported, ", "))
	}
	if gr.URL == "" {
		return Tree{}, fmt.Errorf("%s has no spec.url", where)
	}
	var auth *gitsource.Auth
	var err error
	if g.Provider == "github" {
		auth, err = f.githubAuth(ctx, gr.URL, ref.Namespace, g.SecretName, where)
	} else {
		auth, err = credential(ctx, f, f.secrets, gitsource.AuthFromValues, "spec.secretRef", ref.Namespace, g.SecretName, where, FixGitSecret)
	}
	if err != nil {
		return Tree{}, err
	}
	o := gitsource.Options{URL: gr.URL, Ref: gref, Ignore: g.Ignore, Auth: auth}
	if err := f.mkScratch(); err != nil {
		return Tree{}, err
	}
	o.Dir = filepath.Join(f.scratch, ref.Namespace, ref.Name)
	o.Timeout = f.limit()
	c, err := gitsource.Fetch(ctx, o)
	if err != nil {
		var ae *gitsource.AuthError
		if errors.As(err, &ae) {
			give := "give the credentials of Secret " + g.SecretName
			if g.SecretName == "" {
				give = "name a Secret in spec.secretRef and give its credentials"
			}
			return Tree{}, &fixError{fix: FixGitSecret, err: fmt.Errorf("fetching %s: %w: %s: username and password (a token) or identity and known_hosts", where, err, give)}
		}
		return Tree{}, fmt.Errorf("fetching %s: %w", where, err)
	}
	return Tree{Root: o.Dir, Revision: c.Revision, RevisionTime: c.Time}, nil
}

// githubAuth is how a GitRepository with provider github (at where, of
// url, in namespace) is fetched, as an installation token is used
// (x-access-token): with a token minted for the GitHub App whose
// credentials spec.secretRef holds, else with the job's GitHub token.
// Either token is sent to its own GitHub server only (scheme and host
// alike): the App's (GitHub's, or its githubAppBaseURL's origin), the
// job's; a repository elsewhere is refused before anything is minted or
// sent.
func (f *fetcher) githubAuth(ctx context.Context, url, namespace, secretName, where string) (*gitsource.Auth, error) {
	if secretName != "" {
		return f.githubAppAuth(ctx, url, namespace, secretName, where)
	}
	server := f.githubServer
	if server == "" {
		server = "https://github.com"
	}
	switch {
	case !sameOrigin(url, server):
		return nil, fmt.Errorf("%s: spec.provider github: the repository is not on the job's GitHub server (%s), the only one its token is sent to", where, server)
	case f.githubToken == "":
		return nil, &fixError{fix: FixGitHubToken, err: fmt.Errorf("%s: spec.provider github: the run has no GitHub token to fetch it with", where)}
	}
	return &gitsource.Auth{Username: "x-access-token", Password: f.githubToken}, nil
}

// githubAppAuth mints (once per App installation and run) the
// installation token of the GitHub App whose credentials the Secret
// secretName holds (the configuration's files, SOPS-decrypted, or the
// cluster), after checking the repository is on the App's server. The
// private key and the token are masked as soon as they are known.
func (f *fetcher) githubAppAuth(ctx context.Context, url, namespace, secretName, where string) (*gitsource.Auth, error) {
	data, found, err := fetch.ReadSecret(ctx, f.lookup, "spec.secretRef", namespace, secretName)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if !found {
		return nil, fmt.Errorf("%s: %w", where, &fetch.MissingError{Kind: "Secret", Namespace: namespace, Name: secretName,
			Msg: fmt.Sprintf("spec.secretRef names Secret %s, which is neither in the configuration's files nor in the cluster: give the GitHub App's credentials (%s, %s, %s)", secretName, githubAppIDKey, githubAppInstallationIDKey, githubAppPrivateKeyKey)})
	}
	app, err := parseGitHubApp(data)
	if f.mask != nil && app.keyPEM != "" {
		f.mask(app.Secrets())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: spec.provider github: Secret %s/%s is not a GitHub App's credentials: %w", where, namespace, secretName, err)
	}
	if server := app.gitServer(); !sameOrigin(url, server) {
		return nil, fmt.Errorf("%s: spec.provider github: the repository is not on the GitHub App's server (%s), the only one its token is sent to", where, server)
	}
	key := fmt.Sprintf("%d/%d/%s/%s", app.ID, app.InstallationID, strings.ToLower(app.Owner), app.BaseURL)
	f.mu.Lock()
	if f.appTokens == nil {
		f.appTokens = map[string]*appToken{}
	}
	t, ok := f.appTokens[key]
	if !ok {
		t = &appToken{}
		f.appTokens[key] = t
	}
	f.mu.Unlock()
	t.once.Do(func() {
		t.token, t.err = mintInstallationToken(ctx, app, f.transport)
		if t.token != "" && f.mask != nil {
			f.mask([]string{t.token})
		}
	})
	if t.err != nil {
		return nil, fmt.Errorf("%s: spec.provider github: %w", where, t.err)
	}
	return &gitsource.Auth{Username: "x-access-token", Password: t.token}, nil
}

// appToken is one GitHub App installation's token, minted once per run.
type appToken struct {
	once  sync.Once
	token string
	err   error
}

// sameOrigin reports whether URL a is on server b: the same scheme and
// host (port included), case aside.
func sameOrigin(a, b string) bool {
	ua, err := neturl.Parse(a)
	if err != nil || ua.User != nil {
		return false
	}
	ub, err := neturl.Parse(b)
	if err != nil {
		return false
	}
	return ua.Scheme != "" && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

// close removes what was fetched.
func (f *fetcher) close() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.scratch == "" {
		return nil
	}
	err := os.RemoveAll(f.scratch)
	f.scratch, f.fetched = "", nil
	return err
}

// credential is the credentials of the Secret a source's spec.secretRef
// (at where) names, in namespace, as one model has them for every
// source: given by name (the front end's), else read where Secrets are
// (fetch.ReadSecret through the resolver's lookup: the configuration's
// files, SOPS-decrypted, else the cluster) and parsed as the source's
// kind reads them; nil when it names none.
func credential[T interface{ Secrets() []string }](ctx context.Context, f *fetcher, given map[string]T, parse func(map[string]string) (T, error), field, namespace, name, where string, fix Fix) (*T, error) {
	if name == "" {
		return nil, nil
	}
	if auth, ok := given[name]; ok {
		return &auth, nil
	}
	data, found, err := fetch.ReadSecret(ctx, f.lookup, field, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if found {
		auth, err := parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: Secret %s/%s: %w", where, field, namespace, name, err)
		}
		if f.mask != nil {
			f.mask(auth.Secrets())
		}
		return &auth, nil
	}
	return nil, &fixError{fix: fix, err: fmt.Errorf("%s: %w", where, &fetch.MissingError{Kind: "Secret", Namespace: namespace, Name: name,
		Msg: fmt.Sprintf("%s names Secret %s, which is neither in the configuration's files nor in the cluster: give its credentials", field, name)})}
}
