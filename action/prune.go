package action

import (
	"context"
	"slices"
)

// allowPrune decides whether this run may prune over the budget (inputs
// max-prune and protect): with force-prune; on a pull request, when it
// carries the allow-prune-label; on a push, when the pull request that
// merged the commit carried it. A label the API cannot confirm allows
// nothing.
func (r *runner) allowPrune(ctx context.Context) bool {
	in := r.in
	switch {
	case in.ForcePrune:
		return true
	case r.ev.PR != 0:
		return slices.Contains(r.ev.Labels, in.AllowPruneLabel)
	case r.ev.Name != "push" || r.gh.client == nil || r.ev.SHA == "":
		return false
	}
	labels, err := r.gh.client.MergedPullRequestLabels(ctx, r.ev.Owner, r.ev.Repo, r.ev.SHA)
	if err != nil {
		r.gh.warn("reading the labels of the pull request that merged "+r.ev.SHA, err)
		return false
	}
	if slices.Contains(labels, in.AllowPruneLabel) {
		r.gha.Noticef("the pull request that merged %s has the label %q: prunes over the budget are allowed", r.ev.SHA, in.AllowPruneLabel)
		return true
	}
	return false
}
