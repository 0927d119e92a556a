package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
	"github.com/kustomize-deploy/kustomize-deploy/internal/report"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A drift check reports each unit twice on GitHub: a commit status on the
// commit the cluster runs, and one issue per unit and cluster that is
// open exactly while drift lasts.
const (
	driftLabel            = "kustomize-deploy/drift"
	driftLabelColor       = "d93f0b"
	driftLabelDescription = "The cluster differs from Git (opened, updated and closed by kustomize-deploy)"
)

// issueLimit keeps an issue body under GitHub's 65,536 characters (bytes
// count at least as many; masking only shortens).
const issueLimit = commentLimit

// driftMarker finds a unit's drift issue again: one per unit and cluster,
// as its commit status context.
func driftMarker(unit, cluster string) string { return marker("drift unit="+unit, cluster) }

// driftTitle is the drift issue's title, the same on every run.
func driftTitle(unit, cluster string) string {
	if cluster != "" {
		return "Drift: " + unit + " (" + cluster + ")"
	}
	return "Drift: " + unit
}

// corrected reports whether this run re-applied Git over res's drift.
// An apply that was skipped (an older revision than the applied one) or
// failed corrected nothing.
func corrected(res *result.Result) bool {
	return res.Drifted && res.Reason == result.ReasonApplySucceed
}

// checked reports whether the drift check of res compared the cluster
// with Git: it did not fail, and the unit was not skipped on purpose.
func checked(res *result.Result) bool {
	return res.Mode == result.ModeDrift && (res.Drifted || (res.Ready && !res.Reason.SkipsByDesign()))
}

// driftStatusSHA is the commit whose status shows a drift check: the one
// the cluster runs. That is the run's own commit once a correction applied
// it, else the one the unit last applied, else (never applied, or not a
// commit ID, e.g. a CLI run's --revision) the run's.
func (g *ghReporter) driftStatusSHA(res *result.Result) string {
	if corrected(res) || !commitID.MatchString(res.AppliedRevision) {
		return g.ev.SHA
	}
	return res.AppliedRevision
}

// driftStatus maps a drift check's result to a commit status.
func driftStatus(res *result.Result) (string, string) {
	n := res.Counts.Created + res.Counts.Configured + res.Counts.Deleted
	switch {
	case corrected(res):
		return "success", fmt.Sprintf("drift corrected: %s re-applied, matches Git", objectsText(n))
	case res.Drifted && !res.Ready:
		return "failure", fmt.Sprintf("drifted, correcting failed: %s: %s", res.Reason, firstLine(res.Message))
	case res.Drifted:
		return "failure", fmt.Sprintf("drifted: %s from Git", differText(n))
	case checked(res):
		return "success", "matches Git"
	}
	return statusOf(res)
}

func objectsText(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}

func differText(n int) string {
	if n == 1 {
		return "1 object differs"
	}
	return fmt.Sprintf("%d objects differ", n)
}

// driftIssue keeps the unit's drift issue in step with the check: opened
// or updated while the unit drifts, closed with a comment once a check
// finds the cluster matching Git. A unit whose check failed or was skipped
// leaves its issue as it is. The body renders the result maskResult
// masked, as the comment does.
func (g *ghReporter) driftIssue(ctx context.Context, res *result.Result, cluster string) {
	ev := g.ev
	if g.client == nil || !g.in.DriftIssues || ev.Owner == "" || ev.Repo == "" || !checked(res) {
		return
	}
	mark := driftMarker(res.Unit, cluster)
	if !res.Drifted {
		is, err := g.client.FindIssue(ctx, ev.Owner, ev.Repo, driftLabel, mark)
		if err != nil {
			g.warnIssue("finding the drift issue of "+res.Unit, err)
			return
		}
		if is.Number == 0 {
			return
		}
		if err := g.client.CloseIssue(ctx, ev.Owner, ev.Repo, is.Number, g.masker.String(report.DriftResolved(res, ev.RunURL))); err != nil {
			g.warnIssue(fmt.Sprintf("closing drift issue #%d of %s", is.Number, res.Unit), err)
			return
		}
		fmt.Fprintf(g.log, "closed drift issue #%d of %s: the cluster matches Git again\n", is.Number, res.Unit)
		return
	}
	title := driftTitle(res.Unit, cluster)
	body := report.DriftIssue(res, report.DriftOptions{
		Title: title, Marker: mark, Cluster: cluster, Corrected: corrected(res), RunURL: ev.RunURL, MaxBytes: issueLimit,
	})
	is, err := g.client.UpsertIssue(ctx, ev.Owner, ev.Repo, github.IssueSpec{
		Label: driftLabel, LabelColor: driftLabelColor, LabelDescription: driftLabelDescription,
		Marker: mark, Title: g.masker.String(title), Body: body,
	})
	if err != nil {
		g.warnIssue("opening or updating the drift issue of "+res.Unit, err)
	}
	if is.Number == 0 {
		return
	}
	verb := "updated"
	if is.Created {
		verb = "opened"
	}
	fmt.Fprintf(g.log, "%s drift issue #%d of %s %s\n", verb, is.Number, res.Unit, is.URL)
}

// warnIssue warns that a drift issue could not be kept; a refusal names
// the permission the job lacks.
func (g *ghReporter) warnIssue(what string, err error) {
	msg := g.masker.String(err.Error())
	switch {
	case errors.Is(err, github.ErrUnlabelled):
		g.gha.Warningf("%s: %s; add the label to it by hand", what, msg)
	case errors.Is(err, github.ErrNoPermission):
		g.gha.Warningf("%s: the token may not do this: give the job `permissions: issues: write` (or set the input drift-issues: false): %s", what, msg)
	default:
		g.gha.Warningf("%s: %s", what, msg)
	}
}
