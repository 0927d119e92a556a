package action

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// offlineDiff diffs the rendered manifests of the PR's base and head
// commits, for workflows without cluster access (forked PRs). The base
// commit must be in the checkout (actions/checkout with fetch-depth: 0).
func (r *runner) offlineDiff(ctx context.Context, opts pipeline.Options) (*result.Result, error) {
	res := &result.Result{Unit: opts.Name, Mode: result.ModeDiff, Revision: opts.Revision, Entries: []result.Entry{}}
	fail := func(reason result.Reason, err error) (*result.Result, error) {
		res.Reason, res.Message = reason, err.Error()
		res.Tally()
		return res, nil
	}
	fmt.Fprintf(r.log, "no cluster access (no kubeconfig): diffing rendered manifests of %s against the PR base %s\n", short(r.ev.SHA), short(r.ev.BaseSHA))
	head, err := pipeline.Render(ctx, opts)
	if err != nil {
		return fail(result.ReasonBuildFailed, err)
	}
	// Without a cluster there is nothing to dry-run against: server
	// validation becomes the offline schema check.
	res.Validation = result.ValidationNone
	if opts.Validation != result.ValidationNone {
		res.Validation = result.ValidationClient
		if err := validate.Client(head.Objects, head.Sources); err != nil {
			return fail(result.ReasonValidationFailed, err)
		}
	}
	var base *pipeline.Rendered
	if r.ev.BaseSHA != "" {
		base, err = r.renderAt(ctx, opts, r.ev.BaseSHA)
		if err != nil {
			return fail(result.ReasonArtifactFailed, err)
		}
	}
	res.Entries = pipeline.CompareRendered(base, head)
	res.Ready, res.Reason = true, result.ReasonOfflineDiffSucceed
	res.Message = "offline diff against the PR base (no cluster access)"
	res.Tally()
	return res, nil
}

// renderAt renders the unit as it was at commit sha, from a detached git
// worktree of the checkout. A missing path at that commit renders nothing
// (the unit is new in this PR).
func (r *runner) renderAt(ctx context.Context, opts pipeline.Options, sha string) (*pipeline.Rendered, error) {
	repo, err := gitOutput(ctx, filepath.Dir(opts.Path), "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("the offline diff needs the git checkout: %w", err)
	}
	if _, err := gitOutput(ctx, repo, "cat-file", "-e", sha+"^{commit}"); err != nil {
		return nil, fmt.Errorf("the PR base commit %s is not in the checkout: use actions/checkout with fetch-depth: 0 so the offline diff can render it", short(sha))
	}
	tmp, err := os.MkdirTemp(r.env.Getenv("RUNNER_TEMP"), "kustomize-deploy-base-*")
	if err != nil {
		return nil, err
	}
	wt := filepath.Join(tmp, "base")
	defer func() {
		_, _ = gitOutput(context.WithoutCancel(ctx), repo, "worktree", "remove", "--force", wt)
		_ = os.RemoveAll(tmp)
	}()
	if _, err := gitOutput(ctx, repo, "worktree", "add", "--detach", wt, sha); err != nil {
		return nil, fmt.Errorf("checking out the PR base %s: %w", short(sha), err)
	}
	rel, err := filepath.Rel(repo, opts.Path)
	if err != nil {
		return nil, err
	}
	baseOpts := opts
	baseOpts.Path, baseOpts.Root = filepath.Join(wt, rel), wt
	if _, err := os.Stat(baseOpts.Path); os.IsNotExist(err) {
		return nil, nil
	}
	rendered, err := pipeline.Render(ctx, baseOpts)
	if err != nil {
		return nil, fmt.Errorf("rendering the PR base %s: %w", short(sha), err)
	}
	return rendered, nil
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
