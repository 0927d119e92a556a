package pipeline

import (
	"context"
	"fmt"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Drift compares the cluster with the desired state, as a diff does: an
// object differs in a field this tool applies (fields other managers own,
// such as replicas an HPA sets, are not drift unless Git sets them too),
// or is missing, or something prune would delete is still there. With
// correct, a unit that drifted is applied again, and the result shows
// what was corrected with the diffs that explain it.
func Drift(ctx context.Context, c *kube.Clients, opts Options, correct bool) (*result.Result, error) {
	return drift(correct,
		func() (*result.Result, error) { return Diff(ctx, c, opts) },
		func() (*result.Result, error) { return Apply(ctx, c, opts) })
}

// drift is Drift with the diff and the apply as steps.
func drift(correct bool, diffStep, applyStep func() (*result.Result, error)) (*result.Result, error) {
	diff, err := diffStep()
	diff.Mode = result.ModeDrift
	if err != nil || !diff.Ready || diff.Reason.SkipsByDesign() {
		return diff, err
	}
	diff.Drifted = diff.Changed()
	if !diff.Drifted {
		diff.Message = "no drift: the cluster matches revision " + revisionOr(diff.Revision)
		return diff, nil
	}
	c0 := diff.Counts
	found := fmt.Sprintf("drift: %d to create, %d to configure, %d to delete", c0.Created, c0.Configured, c0.Deleted)
	if !correct {
		diff.Message = found + " (reported, not corrected)"
		return diff, nil
	}
	res, err := applyStep()
	res.Mode, res.Drifted = result.ModeDrift, true
	diffs := map[string]string{}
	for _, e := range diff.Entries {
		diffs[e.Object.String()] = e.Diff
	}
	for i := range res.Entries {
		res.Entries[i].Diff = diffs[res.Entries[i].Object.String()]
	}
	if err == nil {
		res.Message = found + ": corrected, " + res.Message
	}
	return res, err
}
