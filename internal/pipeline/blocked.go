package pipeline

import (
	"context"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Blocked ends unit opts.Name's turn in a run of several units without
// running it, because a unit it depends on in the same run did not
// succeed (err says which and why): the attempt is recorded with
// DependencyNotReady in the unit's inventory, as Apply records a
// dependency that is not ready in the cluster, so that status sees it; a
// unit with no inventory (it never applied anything) gets none. In a mode
// that does not write, only the result says so.
func Blocked(ctx context.Context, c *kube.Clients, opts Options, mode result.Mode, err error) *result.Result {
	r, ctx, serr := start(ctx, c, opts, mode)
	defer r.end()
	if serr == nil {
		if res, skip := r.skipped(); skip {
			return res
		}
		serr = failure(result.ReasonDependencyNotReady, err)
	}
	res, _ := r.fail(ctx, serr)
	return res
}
