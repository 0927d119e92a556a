package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
)

// offlineDiff diffs the rendered manifests of the PR's base and head
// commits, for workflows without cluster access (forked PRs). The base
// commit must be in the checkout (actions/checkout with fetch-depth: 0).
func (r *runner) offlineDiff(ctx context.Context, opts pipeline.Options) (*result.Result, error) {
	fmt.Fprintf(r.log, "no cluster access (no kubeconfig): diffing rendered manifests of %s against the PR base %s\n", short(r.ev.SHA), short(r.ev.BaseSHA))
	return pipeline.DiffOffline(ctx, opts, units.At(r.ev.BaseSHA, r.unitAt, opts.Dir))
}

// unitAt is the unit's directory at commit rev, in a detached git
// worktree of the checkout that every unit of the run shares, in the
// run's temp dir (Env.TempDir; removed when the run ends).
func (r *runner) unitAt(ctx context.Context, rev string, head paths.Dir) (*paths.Dir, error) {
	if _, err := checkout.Git(ctx, head.Root, "rev-parse", "--show-toplevel"); err != nil {
		return nil, fmt.Errorf("the diff against another commit needs the git checkout: %w", err)
	}
	dir, err := r.revs.Unit(ctx, rev, head)
	if errors.Is(err, checkout.ErrMissing) {
		err = fmt.Errorf("%w (use actions/checkout with fetch-depth: 0)", err)
	}
	return dir, err
}

// threeWay makes a pull request's diff against the cluster three-way
// (see pipeline.Options.Base): the PR's own change apart from the live
// changes merging reverts.
func (r *runner) threeWay(opts *pipeline.Options) {
	if r.mode != result.ModeDiff || r.ev.BaseSHA == "" {
		return
	}
	opts.Base, opts.At = r.ev.BaseSHA, r.unitAt
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	return checkout.Git(ctx, dir, args...)
}

func short(sha string) string { return checkout.Short(sha) }
