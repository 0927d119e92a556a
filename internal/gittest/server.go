// Package gittest serves Git repositories over smart HTTP on 127.0.0.1
// for tests, never the network: repositories are made with go-git in a
// temporary directory and served by git's own http-backend (go-git's
// server side answers no shallow fetch, which is how sources are
// fetched).
package gittest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Server serves the repositories under its root, each at URL + "/" +
// name.
type Server struct {
	URL  string
	root string
	t    testing.TB

	mu    sync.Mutex
	auth  map[string][2]string // repository → username, password
	calls map[string]int       // repository → requests
	// handlers serve the paths under their prefix instead (see Handle).
	handlers map[string]http.Handler
}

// NewServer serves an empty root, closed when the test ends. It needs
// git (its http-backend) installed, as the checkout itself does.
func NewServer(t testing.TB) *Server {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("gittest: git is needed to serve repositories: %v", err)
	}
	s := &Server{root: t.TempDir(), t: t, auth: map[string][2]string{}, calls: map[string]int{}}
	home := t.TempDir()
	backend := &cgi.Handler{
		Path: gitPath, Args: []string{"http-backend"}, Root: "/",
		Env:    []string{"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"},
		Stderr: io.Discard,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		for prefix, h := range s.handlers {
			if strings.HasPrefix(r.URL.Path, prefix) {
				s.mu.Unlock()
				h.ServeHTTP(w, r)
				return
			}
		}
		s.mu.Unlock()
		repo, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		s.mu.Lock()
		s.calls[repo]++
		want, locked := s.auth[repo]
		s.mu.Unlock()
		if u, p, ok := r.BasicAuth(); locked && (!ok || u != want[0] || p != want[1]) {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// RequireAuth makes repository name answer 401 to any request without
// basic auth username:password.
func (s *Server) RequireAuth(name, username, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth[name] = [2]string{username, password}
}

// Handle serves the paths under prefix (e.g. /api/v3/) with h instead of
// a repository: another service on the same origin, as a GitHub
// Enterprise Server serves its API beside its repositories.
func (s *Server) Handle(prefix string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handlers == nil {
		s.handlers = map[string]http.Handler{}
	}
	s.handlers[prefix] = h
}

// Calls is how many requests repository name was sent.
func (s *Server) Calls(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[name]
}

// Repo is a repository the server serves: a work tree whose commits
// are made with go-git, on branch master at first.
type Repo struct {
	// URL is where the server serves it.
	URL  string
	Dir  string
	repo *git.Repository
	t    testing.TB
	when time.Time
}

// Repo makes an empty repository name.
func (s *Server) Repo(name string) *Repo {
	s.t.Helper()
	dir := filepath.Join(s.root, name)
	r, err := git.PlainInit(dir, false)
	if err != nil {
		s.t.Fatalf("gittest: %v", err)
	}
	return &Repo{URL: s.URL + "/" + name, Dir: dir, repo: r, t: s.t, when: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// Commit writes files (path → contents; "" removes the file) on the
// current branch, commits them, and returns the commit's hash.
func (r *Repo) Commit(message string, files map[string]string) string {
	r.t.Helper()
	w, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatalf("gittest: %v", err)
	}
	for name, content := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(name))
		if content == "" {
			if _, err := w.Remove(name); err != nil {
				r.t.Fatalf("gittest: removing %s: %v", name, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatalf("gittest: %v", err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatalf("gittest: %v", err)
		}
		if _, err := w.Add(name); err != nil {
			r.t.Fatalf("gittest: adding %s: %v", name, err)
		}
	}
	r.when = r.when.Add(time.Minute)
	h, err := w.Commit(message, &git.CommitOptions{Author: r.sig(), AllowEmptyCommits: true})
	if err != nil {
		r.t.Fatalf("gittest: committing: %v", err)
	}
	return h.String()
}

// Branch creates branch name at the current commit and checks it out.
func (r *Repo) Branch(name string) {
	r.t.Helper()
	r.checkout(name, true)
}

// Checkout checks branch name out.
func (r *Repo) Checkout(name string) {
	r.t.Helper()
	r.checkout(name, false)
}

func (r *Repo) checkout(name string, create bool) {
	w, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatalf("gittest: %v", err)
	}
	if err := w.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName(name), Create: create}); err != nil {
		r.t.Fatalf("gittest: checking out %s: %v", name, err)
	}
}

// Tag tags the current commit: an annotated tag when annotated, else a
// lightweight one.
func (r *Repo) Tag(name string, annotated bool) {
	r.t.Helper()
	head, err := r.repo.Head()
	if err != nil {
		r.t.Fatalf("gittest: %v", err)
	}
	var opts *git.CreateTagOptions
	if annotated {
		opts = &git.CreateTagOptions{Tagger: r.sig(), Message: "release " + name}
	}
	if _, err := r.repo.CreateTag(name, head.Hash(), opts); err != nil {
		r.t.Fatalf("gittest: tagging %s: %v", name, err)
	}
}

// Ref sets reference name (e.g. refs/pull/1/head) to the current commit.
func (r *Repo) Ref(name string) {
	r.t.Helper()
	head, err := r.repo.Head()
	if err != nil {
		r.t.Fatalf("gittest: %v", err)
	}
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), head.Hash())); err != nil {
		r.t.Fatalf("gittest: %v", err)
	}
}

func (r *Repo) sig() *object.Signature {
	return &object.Signature{Name: "Test", Email: "test@example.com", When: r.when}
}

// Bomb commits, on branch master, a tree of depth levels below the root
// in which every level holds width entries all naming the one tree below
// it, and the last level width names of a file of fileSize bytes: a few
// hundred bytes of objects that check out to width^(depth+1) files, as a
// "git bomb" does. The work tree is left as it was.
func (r *Repo) Bomb(width, depth int, fileSize int) string {
	r.t.Helper()
	blob := r.blob(int64(fileSize))
	entries := func(mode filemode.FileMode, h plumbing.Hash) []object.TreeEntry {
		var out []object.TreeEntry
		for i := range width {
			out = append(out, object.TreeEntry{Name: fmt.Sprintf("e%02d", i), Mode: mode, Hash: h})
		}
		return out
	}
	tree := r.tree(entries(filemode.Regular, blob))
	for range depth {
		tree = r.tree(entries(filemode.Dir, tree))
	}
	return r.commitTree("bomb", tree)
}

// Large commits, on branch master, a tree holding file name of size zero
// bytes, streamed into the object store (never held in memory). The work
// tree is left as it was.
func (r *Repo) Large(name string, size int64) string {
	r.t.Helper()
	return r.commitTree("large", r.tree([]object.TreeEntry{{Name: name, Mode: filemode.Regular, Hash: r.blob(size)}}))
}

func (r *Repo) blob(size int64) plumbing.Hash {
	r.t.Helper()
	// git hash-object streams it; go-git would hold it in memory.
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir = r.Dir
	cmd.Stdin = io.LimitReader(zeros{}, size)
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("gittest: git hash-object: %v", err)
	}
	return plumbing.NewHash(strings.TrimSpace(string(out)))
}

func (r *Repo) tree(entries []object.TreeEntry) plumbing.Hash {
	r.t.Helper()
	o := r.repo.Storer.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(o); err != nil {
		r.t.Fatalf("gittest: %v", err)
	}
	h, err := r.repo.Storer.SetEncodedObject(o)
	if err != nil {
		r.t.Fatalf("gittest: %v", err)
	}
	return h
}

func (r *Repo) commitTree(message string, tree plumbing.Hash) string {
	r.t.Helper()
	r.when = r.when.Add(time.Minute)
	c := &object.Commit{Author: *r.sig(), Committer: *r.sig(), Message: message, TreeHash: tree}
	if head, err := r.repo.Head(); err == nil {
		c.ParentHashes = []plumbing.Hash{head.Hash()}
	}
	o := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(o); err != nil {
		r.t.Fatalf("gittest: %v", err)
	}
	h, err := r.repo.Storer.SetEncodedObject(o)
	if err != nil {
		r.t.Fatalf("gittest: %v", err)
	}
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("master"), h)); err != nil {
		r.t.Fatalf("gittest: %v", err)
	}
	return h.String()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
