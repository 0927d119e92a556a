package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/report"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// commentLimit stays under GitHub's 65,536-character limit for comments.
const commentLimit = 65000

// commentPages is how many comments a report may take: diffs are left
// out first (risky ones last), then the last comment is cut (the job
// summary and the diff file keep everything).
const commentPages = 10

// maxStatuses bounds the commit status contexts a run sets: a
// configuration of thousands of units, or a fork's report inventing
// them, would spend the token's hourly API budget on statuses alone.
// Beyond maxStatuses-1 units, the others share one status (overflowContext).
const maxStatuses = 100

// overflowName is the status context, under kustomize-deploy/[cluster/],
// of the units beyond maxStatuses-1: not a unit name (inventory names
// hold no spaces).
const overflowName = "more units"

// ghReporter posts the sticky PR comment, the commit statuses and the
// drift issues. GitHub refusing (a read-only token on a forked PR) is a
// warning, never a failure: the job summary still has everything.
type ghReporter struct {
	client *github.Client // nil without a token
	ev     *event
	in     Inputs
	mode   result.Mode
	gha    *githubactions.Action
	log    io.Writer
	masker *mask.Masker
	// pending are the commit status contexts set to pending and not
	// finished yet: a run that fails ends them.
	pending []string
	// statuses are the contexts set so far; overflow, the states of the
	// units beyond maxStatuses-1 (see summariseOverflow).
	statuses map[string]bool
	overflow overflow
}

// overflow is the units whose statuses did not fit in maxStatuses, and
// the one status they share.
type overflow struct {
	states      map[string]string // context: state
	sha, shown  string
	description string
}

func newGHReporter(env Env, gha *githubactions.Action, log io.Writer, m *mask.Masker, in Inputs, ev *event, mode result.Mode) *ghReporter {
	g := &ghReporter{ev: ev, in: in, mode: mode, gha: gha, log: log, masker: m}
	if in.GitHubToken == "" {
		gha.Warningf("no github-token: no PR comment, commit status or drift issue; the job summary has the result")
		return g
	}
	c, err := github.New(in.GitHubToken, ev.APIURL, github.WithHTTPClient(env.HTTPClient), github.WithServerURL(env.Getenv("GITHUB_SERVER_URL")))
	if err != nil {
		gha.Warningf("GitHub API client: %v", err)
		return g
	}
	g.client = c
	return g
}

// github is the GitHub client of the job's token (input github-token), nil
// without one: what ResourceSetInputProviders of a GitHub type read the
// repository's pull requests, branches and tags with.
func (r *runner) github() resourceset.GitHub {
	if r.gh == nil || r.gh.client == nil {
		return nil
	}
	return r.gh.client
}

func (g *ghReporter) warn(what string, err error) {
	msg := g.masker.String(err.Error())
	if errors.Is(err, github.ErrNoPermission) {
		g.gha.Warningf("%s: the token may not do this (read-only token on a forked PR?): %s", what, msg)
		return
	}
	g.gha.Warningf("%s: %s", what, msg)
}

// status sets the commit status name (a unit's, see statusContext) on
// the deployed or diffed commit, and remembers which are pending. The
// description is masked, as the comment is, before GitHub cuts it to
// 140 characters: it may quote a result's message.
func (g *ghReporter) status(ctx context.Context, name, state, description string) {
	g.statusOn(ctx, g.ev.SHA, name, state, description)
}

// statusOn is status on commit sha: a drift check's goes on the commit
// the cluster runs (see driftStatusSHA).
func (g *ghReporter) statusOn(ctx context.Context, sha, name, state, description string) {
	if g.client == nil || !g.in.Status || sha == "" {
		return
	}
	if g.statuses == nil {
		g.statuses = map[string]bool{}
	}
	if !g.statuses[name] && len(g.statuses) >= maxStatuses-1 {
		if g.overflow.states == nil {
			g.overflow.states = map[string]string{}
		}
		g.overflow.states[name], g.overflow.sha = state, sha
		g.summariseOverflow(ctx, false)
		return
	}
	g.statuses[name] = true
	g.pending = slices.DeleteFunc(g.pending, func(p string) bool { return p == name })
	if state == "pending" {
		g.pending = append(g.pending, name)
	}
	err := g.client.SetStatus(ctx, g.ev.Owner, g.ev.Repo, sha, github.Status{
		State: state, Context: name, Description: g.masker.String(description), TargetURL: g.ev.RunURL,
	})
	if err != nil {
		g.warn("setting the commit status", err)
	}
}

// summariseOverflow sets the one status of the units beyond maxStatuses-1:
// failure when one of them failed, pending while one is, else success,
// and how many are in each state. It is set when its state changes, and
// at the end of the run (final) when its counts did too: a few requests,
// however many units.
func (g *ghReporter) summariseOverflow(ctx context.Context, final bool) {
	o := &g.overflow
	if len(o.states) == 0 {
		return
	}
	counts := map[string]int{}
	for _, st := range o.states {
		counts[st]++
	}
	state := "success"
	switch {
	case counts["failure"]+counts["error"] > 0:
		state = "failure"
	case counts["pending"] > 0:
		state = "pending"
	}
	desc := fmt.Sprintf("%d more units (a run sets at most %d statuses): %d failed, %d pending, %d succeeded; see the job summary",
		len(o.states), maxStatuses, counts["failure"]+counts["error"], counts["pending"], counts["success"])
	if state == o.shown && (!final || desc == o.description) {
		return
	}
	o.shown, o.description = state, desc
	err := g.client.SetStatus(ctx, g.ev.Owner, g.ev.Repo, o.sha, github.Status{
		State: state, Context: statusContext(g.in.cluster(), overflowName), Description: desc, TargetURL: g.ev.RunURL,
	})
	if err != nil {
		g.warn("setting the commit status", err)
	}
}

// failPending ends every status left pending with "error", else sets one
// on run, the run's own context: a status left pending would block the
// PR for ever.
func (g *ghReporter) failPending(ctx context.Context, run, description string) {
	names := slices.Clone(g.pending)
	if len(names) == 0 {
		names = []string{run}
	}
	for _, name := range names {
		g.status(ctx, name, "error", description)
	}
	for name, st := range g.overflow.states {
		if st == "pending" {
			g.overflow.states[name] = "error"
		}
	}
	g.summariseOverflow(ctx, true)
}

// comment upserts the run's sticky comment on the pull request.
func (g *ghReporter) comment(ctx context.Context, rep outcome) {
	if g.client == nil || g.in.Comment == "never" || g.ev.PR == 0 {
		return
	}
	if g.in.Comment == "auto" && g.mode != result.ModeDiff {
		return
	}
	bodies := report.MarkdownPages(rep.results, report.MarkdownOptions{
		Title:      "kustomize-deploy: " + rep.title,
		Marker:     rep.marker,
		PageMarker: func(n int) string { return github.PageMarker(rep.marker, n) },
		RunURL:     g.ev.RunURL,
		MaxBytes:   commentLimit,
		MaxPages:   commentPages,
		Compact:    true,
		Reach:      rep.reach,
	})
	comments, err := g.client.SyncComments(ctx, g.ev.Owner, g.ev.Repo, g.ev.PR, rep.marker, bodies)
	if err != nil {
		g.warn("updating the PR comment", err)
		return
	}
	for i, c := range comments {
		verb := "updated"
		if c.Created {
			verb = "created"
		}
		page := ""
		if len(comments) > 1 {
			page = fmt.Sprintf(" (%d/%d)", i+1, len(comments))
		}
		fmt.Fprintf(g.log, "%s PR comment%s %s\n", verb, page, c.URL)
	}
}

// marker finds a run's comment again on later runs: key is unit=NAME, or
// config=DIR for a configuration's units. The same unit deployed to
// another cluster has a comment of its own.
func marker(key, cluster string) string {
	if cluster == "" {
		return "<!-- kustomize-deploy:" + key + " -->"
	}
	return "<!-- kustomize-deploy:" + key + " cluster=" + cluster + " -->"
}

// cluster names the cluster when the workflow says which: the cluster
// input (formerly environment), else the kubeconfig context input, else the managed cluster's
// name (eks-cluster, gke-cluster, aks-cluster), else "". The same unit
// name in two clusters (a matrix, two workflows) then gets its own
// comment and commit status instead of overwriting the other's.
func (in Inputs) cluster() string {
	c := in.ClusterName
	for _, next := range []string{in.Context, in.Cluster.Name()} {
		if c == "" {
			c = next
		}
	}
	return strings.Trim(notLabel.ReplaceAllString(c, "_"), "_")
}

// statusContext is the unit's commit status context.
func (in Inputs) statusContext() string { return statusContext(in.cluster(), in.Name) }

// statusContext is a commit status context: kustomize-deploy/<name>, or
// kustomize-deploy/<cluster>/<name>.
func statusContext(cluster, name string) string {
	if cluster != "" {
		return "kustomize-deploy/" + cluster + "/" + name
	}
	return "kustomize-deploy/" + name
}

// runStatusContext is the status of a run that failed before any unit
// had one: the unit's, or the configuration's (named by its input).
func (in Inputs) runStatusContext() string {
	if in.Config != "" {
		return statusContext(in.cluster(), "config:"+strings.Trim(filepath.ToSlash(filepath.Clean(in.Config)), "/"))
	}
	return in.statusContext()
}

// unitLabel names the unit, and its cluster when known, for people.
func (in Inputs) unitLabel() string {
	if c := in.cluster(); c != "" {
		return in.Name + " (" + c + ")"
	}
	return in.Name
}

// summaryLimit keeps the job summary below the 1 MiB the runner accepts
// from a step: it drops a larger one, with only an annotation to say so.
const summaryLimit = 1000 << 10

// summary is the job summary: everything, unless that is more than
// summaryLimit; then diffs are trimmed largest first and the full diff is
// in diffFile (relative to the workspace), which the summary names.
func (r *runner) summary(rep outcome, diffFile string) string {
	var footer string
	if diffFile != "" {
		footer = fmt.Sprintf("\nThe full diff is in `%s` (step output `diff-file`; keep it with actions/upload-artifact).\n", diffFile)
	}
	if rep.set != nil {
		footer = "\n" + report.SetSummary(rep.set) + ".\n" + footer
	}
	title := "kustomize-deploy: " + rep.title
	var head string
	if r.in.Mode == ModeTest && rep.set != nil {
		// The verdicts first, then the objects as any run shows them.
		head = "## " + title + "\n\n" + report.TestTable(rep.set)
		if len(head) > summaryLimit/2 {
			head = head[:strings.LastIndex(head[:summaryLimit/2], "\n")+1] + "\n**Truncated:** the rest of the table is in the step output `result`.\n"
		}
		head += "\n"
		title = "Objects"
	}
	return head + report.Markdown(rep.results, report.MarkdownOptions{
		Title:    title,
		MaxBytes: summaryLimit - len(head) - len(footer),
		Reach:    rep.reach,
	}) + footer
}

// diffDir holds the diff files, relative to the workspace: a path later
// steps (actions/upload-artifact) resolve the same way on the runner, where
// the container's /github/workspace is GITHUB_WORKSPACE. Not hidden:
// upload-artifact skips hidden files by default.
const diffDir = "kustomize-deploy-diffs"

// writeDiffFile writes the run's change list with every diff (results are
// masked by maskResult, diffs by where values came from) to
// diffDir/<file>[.<cluster>].diff in the workspace and returns that
// relative path; "" when nothing differs or there is no workspace.
func (r *runner) writeDiffFile(rep outcome) string {
	if r.ev == nil || r.ev.WorkspaceDir == "" || !slices.ContainsFunc(rep.results, hasDiff) {
		return ""
	}
	rel := diffDir + "/" + r.outcomeFile(rep) + ".diff"
	var b strings.Builder
	if rep.set != nil {
		report.TextSet(&b, rep.set, true)
	} else {
		report.Text(&b, rep.results[0], true)
	}
	path := filepath.Join(r.ev.WorkspaceDir, filepath.FromSlash(rel))
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.WriteFile(path, []byte(b.String()), 0o644) // masked by maskResult
	}
	if err != nil {
		r.gha.Warningf("writing the diff file: %v", err)
		return ""
	}
	return rel
}

// outcomeFile names the run's files in diffDir (without their suffix):
// the unit's or configuration's, and the cluster's.
func (r *runner) outcomeFile(rep outcome) string {
	name := rep.file
	if c := r.in.cluster(); c != "" {
		name += "." + strings.NewReplacer("/", "_", ":", "_").Replace(c)
	}
	return name
}

func hasDiff(res *result.Result) bool {
	for _, e := range res.Entries {
		if e.Diff != "" {
			return true
		}
	}
	return false
}

// statusOf maps a result to a commit status state and description (a
// drift check's: driftStatus).
func statusOf(res *result.Result) (string, string) {
	c := res.Counts
	counts := fmt.Sprintf("%d created, %d configured, %d deleted, %d unchanged", c.Created, c.Configured, c.Deleted, c.Unchanged)
	switch {
	case !res.Ready:
		return "failure", string(res.Reason) + ": " + firstLine(res.Message)
	case res.Mode == result.ModeDiff:
		return "success", "diff: " + counts
	}
	return "success", counts
}
