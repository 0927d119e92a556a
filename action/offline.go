package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// offlineDiff diffs the rendered manifests of the PR's base and head
// commits, for workflows without cluster access (forked PRs). The base
// commit must be in the checkout (actions/checkout with fetch-depth: 0).
func (r *runner) offlineDiff(ctx context.Context, opts pipeline.Options) (*result.Result, error) {
	fmt.Fprintf(r.log, "no cluster access (no kubeconfig): diffing rendered manifests of %s against the PR base %s\n", short(r.ev.SHA), short(r.ev.BaseSHA))
	return pipeline.DiffOffline(ctx, opts, func(ctx context.Context) (*paths.Dir, func(), error) {
		return r.checkoutBase(ctx, opts.Dir)
	})
}

// checkoutBase makes the unit's directory at the PR's base commit
// available, in a detached git worktree of the checkout that every unit
// of the run shares (see baseWorktree). A path missing at that commit
// gives no directory (the unit is new in this PR).
func (r *runner) checkoutBase(ctx context.Context, head paths.Dir) (*paths.Dir, func(), error) {
	noop := func() {}
	sha := r.ev.BaseSHA
	if sha == "" {
		return nil, noop, nil
	}
	wt, err := r.baseWorktree(ctx, head.Root)
	if err != nil {
		return nil, noop, err
	}
	dir, err := paths.Resolve(filepath.Join(wt, filepath.FromSlash(head.Rel)), wt)
	switch {
	case errors.Is(err, paths.ErrNotDir):
		return nil, noop, nil
	case err != nil:
		return nil, noop, fmt.Errorf("the unit at the PR base %s: %w", short(sha), err)
	}
	return &dir, noop, nil
}

// baseWorktree checks the PR's base commit out of repo once per run, in
// the container's temp dir; closeBase removes it.
func (r *runner) baseWorktree(ctx context.Context, repo string) (string, error) {
	if r.base != "" {
		return r.base, nil
	}
	sha := r.ev.BaseSHA
	if _, err := gitOutput(ctx, repo, "rev-parse", "--show-toplevel"); err != nil {
		return "", fmt.Errorf("the offline diff needs the git checkout: %w", err)
	}
	if _, err := gitOutput(ctx, repo, "cat-file", "-e", sha+"^{commit}"); err != nil {
		return "", fmt.Errorf("the PR base commit %s is not in the checkout: use actions/checkout with fetch-depth: 0 so the offline diff can render it", short(sha))
	}
	tmp, err := os.MkdirTemp(r.env.TempDir, "kustomize-deploy-base-*")
	if err != nil {
		return "", err
	}
	wt := filepath.Join(tmp, "base")
	r.closeBase = func() {
		_, _ = gitOutput(context.WithoutCancel(ctx), repo, "worktree", "remove", "--force", wt)
		_ = os.RemoveAll(tmp)
	}
	if _, err := gitOutput(ctx, repo, "worktree", "add", "--detach", wt, sha); err != nil {
		return "", fmt.Errorf("checking out the PR base %s: %w", short(sha), err)
	}
	r.base = wt
	return wt, nil
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
