package units

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/gitsource"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocisource"
)

// FetchTimeout bounds the fetch of one GitRepository (or the pull of
// one OCIRepository).
const FetchTimeout = 2 * time.Minute

// fetcher fetches the GitRepositories that are neither this repository
// nor mapped to a directory, and pulls the OCIRepositories not mapped,
// each once, into a scratch directory that Close removes. It is safe
// for concurrent use.
type fetcher struct {
	// secrets stand in for the Secrets a GitRepository's spec.secretRef
	// names, by name; ociSecrets for an OCIRepository's.
	secrets    map[string]gitsource.Auth
	ociSecrets map[string]ocisource.Auth

	mu      sync.Mutex
	scratch string
	fetched map[config.SourceRef]fetchResult
}

type fetchResult struct {
	src source
	err error
	// origin says where a pulled artifact's content comes from, for the
	// note.
	origin string
}

// fetchGit fetches GitRepository gr (ref), for unit u, once: its tree
// is what u builds, its revision the one recorded.
func (r *resolver) fetchGit(ctx context.Context, u *config.Unit, ref config.SourceRef, gr *config.Source) (source, error) {
	src, err := r.fetchGitOnce(ctx, ref, gr)
	if err != nil {
		return source{}, &SourceError{Unit: u, Source: ref, Why: err.Error()}
	}
	return src, nil
}

// fetchGitOnce fetches GitRepository gr (ref) once per run, for a unit
// or a HelmRelease's chart alike: its errors name the GitRepository.
func (r *resolver) fetchGitOnce(ctx context.Context, ref config.SourceRef, gr *config.Source) (source, error) {
	f := r.fetcher
	f.mu.Lock()
	defer f.mu.Unlock()
	got, ok := f.fetched[ref]
	if !ok {
		got.src, got.err = f.fetch(ctx, ref, gr)
		if f.fetched == nil {
			f.fetched = map[config.SourceRef]fetchResult{}
		}
		f.fetched[ref] = got
	}
	if got.err != nil {
		return source{}, got.err
	}
	r.note("fetched "+ref.String(), fmt.Sprintf("%s (%s:%d) is another repository, fetched from %s: revision %s", ref, gr.File, gr.Line, gitsource.Redact(gr.URL), got.src.Revision))
	return got.src, nil
}

// fetch fetches gr into the scratch directory. Its errors name the
// GitRepository, its URL (without credentials) and ref.
func (f *fetcher) fetch(ctx context.Context, ref config.SourceRef, gr *config.Source) (source, error) {
	g := gr.Git
	if g == nil {
		g = &config.GitSpec{}
	}
	gref := gitsource.Ref{Branch: g.Branch, Tag: g.Tag, SemVer: g.SemVer, Name: g.Name, Commit: g.Commit}
	where := fmt.Sprintf("GitRepository %s/%s (%s:%d, %s at %s)", ref.Namespace, ref.Name, gr.File, gr.Line, gitsource.Redact(gr.URL), gref)
	if len(g.Unsupported) > 0 {
		return source{}, fmt.Errorf("%s sets %s, which kustomize-deploy does not honour when it fetches a repository", where, strings.Join(g.Unsupported, ", "))
	}
	if gr.URL == "" {
		return source{}, fmt.Errorf("%s has no spec.url", where)
	}
	auth, err := credential(f.secrets, g.SecretName, where, "--git-secret", "git-secrets")
	if err != nil {
		return source{}, err
	}
	o := gitsource.Options{URL: gr.URL, Ref: gref, Ignore: g.Ignore, Auth: auth}
	if err := f.mkScratch(); err != nil {
		return source{}, err
	}
	o.Dir = filepath.Join(f.scratch, ref.Namespace, ref.Name)
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	c, err := gitsource.Fetch(ctx, o)
	if err != nil {
		var ae *gitsource.AuthError
		if errors.As(err, &ae) {
			secret := g.SecretName
			if secret == "" {
				secret = "NAME"
			}
			return source{}, fmt.Errorf("fetching %s: %w: give the credentials with --git-secret %s=FILE (the action's input git-secrets), username and password (a token) or identity and known_hosts", where, err, secret)
		}
		return source{}, fmt.Errorf("fetching %s: %w", where, err)
	}
	return source{Root: o.Dir, Revision: c.Revision, RevisionTime: c.Time}, nil
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

// credential is what stands in for the Secret name that a source's
// spec.secretRef (at where) names, from those given by flag (the action's
// input); nil when it names none.
func credential[T any](given map[string]T, name, where, flag, input string) (*T, error) {
	if name == "" {
		return nil, nil
	}
	auth, ok := given[name]
	if !ok {
		return nil, fmt.Errorf("%s: spec.secretRef names Secret %s: give its credentials with %s %s=FILE (the action's input %s: a %s=FILE line)", where, name, flag, name, input, name)
	}
	return &auth, nil
}
