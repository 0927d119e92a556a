package gitsource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
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
	// Ignore is spec.ignore (nil when absent): see fetch.Exclude.
	Ignore *string
	// Limits bound the tree checked out; zero fields take DefaultLimits'.
	Limits Limits
	// Timeout bounds the fetch and the checkout; 0 means fetch.Timeout.
	Timeout time.Duration
}

// Limits bound what one fetch may make on disk: a repository is the
// repository's word, and a small one may expand without end (one tree
// referenced ten times per level, a gigabyte blob of zeros).
type Limits struct {
	// Files bounds the entries (files, directories, links) of the tree.
	Files int
	// Bytes bounds the bytes of the tree's files summed; FileBytes one
	// file's.
	Bytes, FileBytes int64
}

// DefaultLimits are the limits of a fetch unless told otherwise.
var DefaultLimits = Limits{Files: 100_000, Bytes: 256 << 20, FileBytes: 64 << 20}

func (l Limits) or(d Limits) Limits {
	if l.Files <= 0 {
		l.Files = d.Files
	}
	if l.Bytes <= 0 {
		l.Bytes = d.Bytes
	}
	if l.FileBytes <= 0 {
		l.FileBytes = d.FileBytes
	}
	return l
}

// LimitError is a tree that exceeds one of its Limits: nothing of it is
// kept.
type LimitError struct {
	// Limit names the limit ("files", "bytes", "file bytes", and in the
	// pack fetched "objects", "object bytes"), Max its
	// value; Path is the entry that crossed it.
	Limit string
	Max   int64
	Path  string
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case "objects":
		return fmt.Sprintf("the fetched pack holds more than %d objects (the limit)", e.Max)
	case "object bytes":
		return fmt.Sprintf("the fetched pack holds %s, more than %d bytes (the limit of one file)", e.Path, e.Max)
	case "files":
		return fmt.Sprintf("the tree holds more than %d files and directories (the limit), at %s", e.Max, e.Path)
	case "file bytes":
		return fmt.Sprintf("file %s is larger than %d bytes (the limit of one file)", e.Path, e.Max)
	}
	return fmt.Sprintf("the tree's files add up to more than %d bytes (the limit), at %s", e.Max, e.Path)
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
// (see fetch.Exclude). Errors carry no credentials; an *AuthError is the
// server refusing them.
func Fetch(ctx context.Context, o Options) (_ Commit, err error) {
	if err := CheckURL(o.URL); err != nil {
		return Commit{}, err
	}
	s, err := o.Ref.strategy()
	if err != nil {
		return Commit{}, err
	}
	installTransport()
	ctx, cancel := fetch.WithTimeout(ctx, o.Timeout)
	defer cancel()
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
	// Nothing of a failed fetch is left to build from.
	defer func() {
		if err != nil {
			os.RemoveAll(o.Dir)
		}
	}()
	// The pack received is checked as it is written (see packGuard);
	// objects larger than a megabyte are read as streams, never whole.
	lim := o.Limits.or(DefaultLimits)
	store := filesystem.NewStorageWithOptions(guardedFS{Filesystem: osfs.New(tmp+"/git", osfs.WithBoundOS()), lim: lim}, cache.NewObjectLRUDefault(),
		filesystem.Options{LargeObjectThreshold: 1 << 20})
	repo, err := git.Init(store, nil)
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
	if err := checkout(ctx, store, c, o.Dir, lim); err != nil {
		return Commit{}, fmt.Errorf("checking out %s: %w", hash, err)
	}
	if err := fetch.Exclude(o.Dir, o.Ignore); err != nil {
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
		tag, ok, err := fetch.HighestTag(s.want, tags)
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
	msg := strings.TrimSpace(err.Error())
	// go-git quotes the body of a refusal after its sentinel: the
	// server's words (or an internal service's, behind a redirect) are
	// never repeated.
	for _, sentinel := range []error{transport.ErrAuthenticationRequired, transport.ErrAuthorizationFailed, transport.ErrRepositoryNotFound} {
		if errors.Is(err, sentinel) {
			msg = sentinel.Error()
		}
	}
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		how := "no credentials were given (spec.secretRef)"
		switch {
		case f.o.Auth != nil:
			how = "the credentials given for spec.secretRef were refused"
		case fetch.Redact(f.o.URL) != f.o.URL:
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
	if u := fetch.Redact(o.URL); u != o.URL {
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

// Unwrap lets errors.As find a typed error (a *LimitError, a
// *fetch.RedirectError) under the cleaned message.
func (e *redactedError) Unwrap() error { return e.err }
