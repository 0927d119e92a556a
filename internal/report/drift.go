package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// DriftOptions shape the markdown of a unit's drift issue.
type DriftOptions struct {
	// Title is the issue's heading, e.g. "Drift: web (prod)".
	Title string
	// Marker is a hidden HTML comment placed first, by which the issue is
	// found again (see MarkdownOptions.Marker).
	Marker string
	// Cluster names the cluster, "" when the run names none.
	Cluster string
	// Corrected says this run re-applied Git over the drift.
	Corrected bool
	// RunURL links the workflow run that checked.
	RunURL string
	// MaxBytes caps the body's size in bytes; 0 means unlimited. GitHub
	// rejects issue bodies over 65,536 characters.
	MaxBytes int
}

// DriftIssue renders the body of a drifted unit's issue: whether the
// drift was corrected (opts.Corrected), only reported (res ended with
// DiffSucceed) or the correction failed, what was compared when, then the result as
// Markdown renders it, with every object that differed and its diff.
// Over opts.MaxBytes, diffs give way first (see Markdown).
func DriftIssue(res *result.Result, opts DriftOptions) string {
	var b strings.Builder
	if m := marker(opts.Marker); m != "" {
		b.WriteString(m + "\n")
	}
	if opts.Title != "" {
		fmt.Fprintf(&b, "## %s\n\n", escapeInline(opts.Title))
	}
	n := differing(res)
	switch {
	case opts.Corrected:
		fmt.Fprintf(&b, "**Drift corrected:** %s differed from Git and %s re-applied by this run (%s). "+
			"This issue closes, with a comment, when a later check finds the cluster still matching Git; "+
			"if something keeps changing these objects back, it stays open and is updated on every check.\n\n",
			objects(n), were(n), changes(res, true))
	case res.Reason != result.ReasonDiffSucceed:
		fmt.Fprintf(&b, "**The cluster differs from Git, and correcting it did not succeed** (%s, below): %s (%s). "+
			"This issue is updated on every check while the drift lasts.\n\n", escapeInline(string(res.Reason)), objects(n), changes(res, false))
	default:
		fmt.Fprintf(&b, "**The cluster differs from Git:** %s (%s). Reported, not corrected. "+
			"This issue is updated on every check while the drift lasts and closes, with a comment, when the cluster matches Git again.\n\n",
			objects(n), changes(res, false))
	}
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| unit | %s |\n", codeSpan(res.Unit))
	if opts.Cluster != "" {
		fmt.Fprintf(&b, "| cluster | %s |\n", codeSpan(opts.Cluster))
	}
	if res.Revision != "" {
		fmt.Fprintf(&b, "| compared with Git at | %s |\n", codeSpan(res.Revision))
	}
	if res.AppliedRevision != "" {
		fmt.Fprintf(&b, "| last applied revision | %s |\n", codeSpan(res.AppliedRevision))
	}
	if checked := checkedBy(res, opts.RunURL); checked != "" {
		fmt.Fprintf(&b, "| checked | %s |\n", checked)
	}
	b.WriteString("\n")

	head := b.String()
	limit := 0
	if opts.MaxBytes > 0 {
		limit = max(opts.MaxBytes-len(head), 1)
	}
	return head + Markdown([]*result.Result{res}, MarkdownOptions{RunURL: opts.RunURL, MaxBytes: limit})
}

// DriftResolved is the comment that closes a unit's drift issue: a check
// found the cluster matching res.Revision and changed nothing.
func DriftResolved(res *result.Result, runURL string) string {
	var b strings.Builder
	b.WriteString("**The cluster matches Git again**")
	if res.Revision != "" {
		b.WriteString(" at " + codeSpan(res.Revision))
	}
	b.WriteString(".")
	if checked := checkedBy(res, runURL); checked != "" {
		b.WriteString(" Checked " + checked + ",")
	}
	b.WriteString(" which found no drift and changed nothing: the drift was corrected before (by an earlier drift run, a deploy or by hand). Closing; new drift opens a new issue.\n")
	return b.String()
}

// checkedBy says when and by which run the unit was checked.
func checkedBy(res *result.Result, runURL string) string {
	var parts []string
	if !res.StartedAt.IsZero() {
		parts = append(parts, res.StartedAt.UTC().Format(time.RFC3339))
	}
	if runURL != "" {
		parts = append(parts, "by "+link("this workflow run", runURL))
	}
	return strings.Join(parts, " ")
}

// differing is the number of objects that differed from Git.
func differing(res *result.Result) int {
	return res.Counts.Created + res.Counts.Configured + res.Counts.Deleted
}

// changes says what differed: "1 to configure, 2 to delete", or, once
// done, "1 configured, 2 deleted".
func changes(res *result.Result, done bool) string {
	c := res.Counts
	var parts []string
	for _, p := range []struct {
		n          int
		todo, past string
	}{{c.Created, "to create", "created"}, {c.Configured, "to configure", "configured"}, {c.Deleted, "to delete", "deleted"}} {
		if p.n == 0 {
			continue
		}
		what := p.todo
		if done {
			what = p.past
		}
		parts = append(parts, fmt.Sprintf("%d %s", p.n, what))
	}
	if len(parts) == 0 {
		return "nothing to change"
	}
	return strings.Join(parts, ", ")
}

func objects(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}

func were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}
