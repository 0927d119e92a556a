// Package checkout makes other commits of a git repository readable as
// directories: detached worktrees in a temp dir, one per commit, shared by
// every unit of a run. The repository's own work tree is never touched.
// The offline diff renders a pull request's base with it, and the
// three-way diff the revision last applied.
package checkout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

// ErrMissing is a commit the repository does not have (a shallow clone).
var ErrMissing = errors.New("is not in the checkout")

// Worktrees hands out worktrees of one repository. It is safe for
// concurrent use; Close removes what it made.
type Worktrees struct {
	// TempDir holds the worktrees; empty means os.TempDir().
	TempDir string

	mu   sync.Mutex
	tmp  string            // the directory made in TempDir
	repo string            // the top level the worktrees belong to
	dirs map[string]string // commit → worktree root
	top  map[string]string // directory asked about → its top level
}

// Unit is head, the unit's directory, as it is at commit rev: nil when the
// directory does not exist there (the unit is new). head.Root must lie in
// a git work tree; the unit keeps its place relative to the repository's
// top level, and so does its root.
func (w *Worktrees) Unit(ctx context.Context, rev string, head paths.Dir) (*paths.Dir, error) {
	top, err := w.topLevel(ctx, head.Root)
	if err != nil {
		return nil, err
	}
	wt, err := w.At(ctx, top, rev)
	if err != nil {
		return nil, err
	}
	relRoot, ok := paths.Within(top, head.Root)
	if !ok {
		return nil, fmt.Errorf("the root %s is outside the git work tree %s", head.Root, top)
	}
	root := filepath.Join(wt, relRoot)
	if _, err := os.Stat(root); err != nil {
		return nil, nil // the root itself is new
	}
	dir, err := paths.Resolve(filepath.Join(root, filepath.FromSlash(head.Rel)), root)
	switch {
	case errors.Is(err, paths.ErrNotDir):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("the unit at %s: %w", Short(rev), err)
	}
	return &dir, nil
}

// At is the root of a worktree of repo (its top level) at commit rev,
// made on first use. Every call must name the same repository.
func (w *Worktrees) At(ctx context.Context, repo, rev string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.repo == "":
		w.repo = repo
	case w.repo != repo:
		return "", fmt.Errorf("checkout: worktrees of %s asked of %s", w.repo, repo)
	}
	if d, ok := w.dirs[rev]; ok {
		return d, nil
	}
	if _, err := Git(ctx, repo, "cat-file", "-e", rev+"^{commit}"); err != nil {
		return "", fmt.Errorf("commit %s %w", Short(rev), ErrMissing)
	}
	if w.tmp == "" {
		tmp, err := os.MkdirTemp(w.TempDir, "kustomize-deploy-rev-*")
		if err != nil {
			return "", err
		}
		w.tmp = tmp
	}
	wt := filepath.Join(w.tmp, fmt.Sprint(len(w.dirs)))
	if _, err := Git(ctx, repo, "worktree", "add", "--detach", wt, rev); err != nil {
		return "", fmt.Errorf("checking out %s: %w", Short(rev), err)
	}
	real, err := filepath.EvalSymlinks(wt)
	if err != nil {
		return "", err
	}
	if w.dirs == nil {
		w.dirs = map[string]string{}
	}
	w.dirs[rev] = real
	return real, nil
}

// topLevel is the top level of the work tree holding dir.
func (w *Worktrees) topLevel(ctx context.Context, dir string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.top[dir]; ok {
		return t, nil
	}
	t, err := Git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s is not in a git checkout: %w", dir, err)
	}
	if t, err = filepath.EvalSymlinks(t); err != nil {
		return "", err
	}
	if w.top == nil {
		w.top = map[string]string{}
	}
	w.top[dir] = t
	return t, nil
}

// cleanupTimeout bounds each git command Close runs.
const cleanupTimeout = 5 * time.Second

// Close removes every worktree, and git's record of them.
func (w *Worktrees) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tmp == "" {
		return
	}
	for _, wt := range w.dirs {
		_ = cleanupGit(w.repo, "worktree", "remove", "--force", wt)
	}
	// Whatever a remove left (it timed out, say) goes here, and prune
	// drops git's record of it.
	_ = os.RemoveAll(w.tmp)
	if w.repo != "" {
		_ = cleanupGit(w.repo, "worktree", "prune")
	}
	w.tmp, w.dirs = "", nil
}

// cleanupGit runs git for Close. Its context is not the run's: a cleanup
// must still run after the run was cancelled (Close is deferred by
// callers whose context may be done). It is bounded instead, so that a
// git that hangs cannot hold up the exit.
func cleanupGit(dir string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_, err := Git(ctx, dir, args...)
	return err
}

// Git runs git in dir and returns its trimmed output; a failure carries
// git's own message.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// Origin is the URL of the repository's origin remote, without
// credentials or .git; "" without one.
func Origin(ctx context.Context, root string) string {
	url, err := Git(ctx, root, "config", "--get", "remote.origin.url")
	if err != nil {
		return ""
	}
	url = urlCredentials.ReplaceAllString(url, "$1")
	return strings.TrimSuffix(url, ".git")
}

var urlCredentials = regexp.MustCompile(`^([a-z]+://)[^@/]+@`)

// Short is a commit's first 12 characters, as messages show it.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
