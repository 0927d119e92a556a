package gitsource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/kustomize-deploy/kustomize-deploy/internal/semvertag"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sourceignore"
)

// Options say what to fetch, and where.
type Options struct {
	// URL is spec.url; Ref spec.ref.
	URL string
	Ref Ref
	// Auth is the Secret spec.secretRef names; nil for none.
	Auth *Auth
	// Dir is the directory the tree is checked out into: it must not
	// exist or be empty. Git's own files are kept elsewhere (and removed),
	// so that Dir holds the tree alone, as a source-controller artifact.
	Dir string
	// Ignore is spec.ignore (nil when absent): see sourceignore.Exclude.
	Ignore *string
}

// Commit is what was fetched.
type Commit struct {
	// Revision is source-controller's: "main@sha1:<hex>",
	// "v1.2.3@sha1:<hex>", "sha1:<hex>".
	Revision string
	// Hash is the commit's, Time its committer's.
	Hash string
	Time time.Time
}

// AuthError is a fetch the server refused for want of (right)
// credentials.
type AuthError struct{ Err error }

func (e *AuthError) Error() string { return e.Err.Error() }
func (e *AuthError) Unwrap() error { return e.Err }

// Fetch fetches the commit o.Ref names from o.URL into o.Dir, shallow
// where the ref allows (a branch, a tag, a semver range, a name: depth 1;
// a commit: its branch, or every branch, in full, as source-controller
// does), then removes what source-controller leaves out of an artifact
// (see sourceignore.Exclude). Errors carry no credentials; an *AuthError is the
// server refusing them.
func Fetch(ctx context.Context, o Options) (Commit, error) {
	s, err := o.Ref.strategy()
	if err != nil {
		return Commit{}, err
	}
	tmp, err := os.MkdirTemp("", "kustomize-deploy-git-*")
	if err != nil {
		return Commit{}, err
	}
	defer os.RemoveAll(tmp)
	auth, err := o.Auth.method(o.URL, tmp)
	if err != nil {
		return Commit{}, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return Commit{}, err
	}
	store := filesystem.NewStorage(osfs.New(tmp+"/git", osfs.WithBoundOS()), cache.NewObjectLRUDefault())
	repo, err := git.Init(store, osfs.New(o.Dir, osfs.WithBoundOS()))
	if err != nil {
		return Commit{}, err
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: git.DefaultRemoteName, URLs: []string{o.URL}})
	if err != nil {
		return Commit{}, err
	}
	f := fetcher{repo: repo, remote: remote, auth: auth, o: o}
	ref, hash, err := f.fetch(ctx, s)
	if err != nil {
		return Commit{}, f.explain(err)
	}
	c, err := repo.CommitObject(hash)
	if err != nil {
		return Commit{}, err
	}
	w, err := repo.Worktree()
	if err != nil {
		return Commit{}, err
	}
	if err := w.Checkout(&git.CheckoutOptions{Hash: hash, Force: true}); err != nil {
		return Commit{}, fmt.Errorf("checking out %s: %w", hash, err)
	}
	// go-git points the tree at its store with a .git file: not part of
	// the tree.
	if err := os.Remove(filepath.Join(o.Dir, ".git")); err != nil && !os.IsNotExist(err) {
		return Commit{}, err
	}
	if err := sourceignore.Exclude(o.Dir, o.Ignore); err != nil {
		return Commit{}, err
	}
	return Commit{Revision: revision(ref, hash.String()), Hash: hash.String(), Time: c.Committer.When}, nil
}

type fetcher struct {
	repo   *git.Repository
	remote *git.Remote
	auth   transport.AuthMethod
	o      Options
}

// fetch fetches what s names, and returns the reference the revision is
// named by ("" for a commit alone) and the commit.
func (f fetcher) fetch(ctx context.Context, s strategy) (string, plumbing.Hash, error) {
	switch s.kind {
	case "commit":
		spec := "+refs/heads/*:refs/remotes/origin/*"
		if s.ref != "" {
			spec = "+" + s.ref + ":" + s.ref
		}
		if err := f.get(ctx, 0, spec); err != nil {
			return "", plumbing.ZeroHash, err
		}
		h := plumbing.NewHash(s.want)
		if _, err := f.repo.CommitObject(h); err != nil {
			where := "on any branch"
			if s.ref != "" {
				where = "on branch " + strings.TrimPrefix(s.ref, "refs/heads/")
			}
			return "", h, fmt.Errorf("commit %s is not %s", s.want, where)
		}
		return s.ref, h, nil
	case "semver":
		refs, err := f.list(ctx)
		if err != nil {
			return "", plumbing.ZeroHash, err
		}
		var tags []string
		for _, r := range refs {
			if r.Name().IsTag() {
				tags = append(tags, r.Name().Short())
			}
		}
		tag, ok, err := semvertag.Highest(s.want, tags)
		if err != nil {
			return "", plumbing.ZeroHash, err
		}
		if !ok {
			return "", plumbing.ZeroHash, fmt.Errorf("no tag matches semver range %q (%d tags)", s.want, len(tags))
		}
		s.ref = "refs/tags/" + tag
	case "name":
		refs, err := f.list(ctx)
		if err != nil {
			return "", plumbing.ZeroHash, err
		}
		found := false
		for _, r := range refs {
			found = found || r.Name().String() == s.ref
		}
		if !found {
			return "", plumbing.ZeroHash, fmt.Errorf("reference %s is not in the repository", s.ref)
		}
	}
	if err := f.get(ctx, 1, "+"+s.ref+":"+s.ref); err != nil {
		if errors.Is(err, git.NoMatchingRefSpecError{}) {
			return "", plumbing.ZeroHash, fmt.Errorf("%s %s is not in the repository", s.kind, strings.TrimPrefix(strings.TrimPrefix(s.ref, "refs/heads/"), "refs/tags/"))
		}
		return "", plumbing.ZeroHash, err
	}
	h, err := f.repo.ResolveRevision(plumbing.Revision(s.ref + "^{commit}"))
	if err != nil {
		return "", plumbing.ZeroHash, fmt.Errorf("%s: %w", s.ref, err)
	}
	return s.ref, *h, nil
}

// get fetches refspec at depth (0: all history).
func (f fetcher) get(ctx context.Context, depth int, refspec string) error {
	err := f.remote.FetchContext(ctx, &git.FetchOptions{
		RefSpecs: []config.RefSpec{config.RefSpec(refspec)},
		Depth:    depth, Auth: f.auth, Tags: git.NoTags,
		CABundle: f.caBundle(), ClientCert: f.cert(), ClientKey: f.key(),
	})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}

func (f fetcher) list(ctx context.Context) ([]*plumbing.Reference, error) {
	return f.remote.ListContext(ctx, &git.ListOptions{Auth: f.auth, CABundle: f.caBundle(), ClientCert: f.cert(), ClientKey: f.key()})
}

func (f fetcher) caBundle() []byte {
	if f.o.Auth == nil {
		return nil
	}
	return f.o.Auth.CA
}

func (f fetcher) cert() []byte {
	if f.o.Auth == nil {
		return nil
	}
	return f.o.Auth.TLSCert
}

func (f fetcher) key() []byte {
	if f.o.Auth == nil {
		return nil
	}
	return f.o.Auth.TLSKey
}

// explain makes err say what failed without credentials: the server
// refusing them is an *AuthError.
func (f fetcher) explain(err error) error {
	err = redacted(err, f.o)
	msg := strings.TrimSpace(err.Error()) // the server's body may end a line
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		how := "no credentials were given (spec.secretRef)"
		switch {
		case f.o.Auth != nil:
			how = "the credentials given for spec.secretRef were refused"
		case Redact(f.o.URL) != f.o.URL:
			how = "the credentials in spec.url were refused"
		}
		return &AuthError{Err: &redactedError{msg: msg + ": " + how, err: err}}
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return &redactedError{msg: msg + " (or it needs credentials: spec.secretRef)", err: err}
	}
	return &redactedError{msg: msg, err: err}
}

// redacted is err with any credential of o replaced: go-git's messages
// may quote the URL.
func redacted(err error, o Options) error {
	msg := err.Error()
	var secrets []string
	if o.Auth != nil {
		secrets = o.Auth.Secrets()
	}
	if u := Redact(o.URL); u != o.URL {
		msg = strings.ReplaceAll(msg, o.URL, u)
	}
	clean := msg
	for _, s := range secrets {
		clean = strings.ReplaceAll(clean, s, "xxxxx")
	}
	if clean == err.Error() {
		return err
	}
	return &redactedError{msg: clean, err: err}
}

// redactedError keeps what err is (errors.Is) with its message cleaned.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }
