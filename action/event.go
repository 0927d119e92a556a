package action

import (
	"fmt"
	"math"
	"regexp"

	"github.com/sethvargo/go-githubactions"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// event is what a run needs to know about what triggered it.
type event struct {
	Name         string // GITHUB_EVENT_NAME
	Owner, Repo  string
	PR           int      // pull request number, 0 if none
	SHA          string   // the commit being deployed or diffed (PR head, merge group head, pushed commit)
	BaseSHA      string   // PR base commit, or the merge group's parent
	Fork         bool     // PR from another repository: expect a read-only token, no secrets
	Labels       []string // the pull request's labels
	RunURL       string
	APIURL       string
	WorkspaceDir string
	// Run is the finished run a workflow_run event is about (mode
	// publish), nil for other events.
	Run *workflowRun
}

// workflowRun is what a workflow_run event says of the run that finished:
// GitHub's word, not the run's (see publish).
type workflowRun struct {
	Event      string // the event that ran it: pull_request
	HeadSHA    string
	HeadBranch string
	HeadOwner  string // owner of the head repository: a fork's
	// PRs are the pull requests GitHub links to the run: empty for a
	// fork's (GitHub leaves them out), found through the API then.
	PRs []workflowRunPR
	URL string // the run's page, linked from the comment and statuses
}

// workflowRunPR is a pull request of a workflow_run event.
type workflowRunPR struct {
	Number  int
	HeadSHA string
}

func readEvent(gha *githubactions.Action) (*event, error) {
	ctx, err := gha.Context()
	if err != nil {
		return nil, fmt.Errorf("reading the GitHub context: %w", err)
	}
	e := &event{Name: ctx.EventName, SHA: ctx.SHA, APIURL: ctx.APIURL, WorkspaceDir: ctx.Workspace}
	e.Owner, e.Repo = ctx.Repo()
	if ctx.RunID != 0 && ctx.Repository != "" {
		e.RunURL = fmt.Sprintf("%s/%s/actions/runs/%d", ctx.ServerURL, ctx.Repository, ctx.RunID)
	}
	if pr, ok := ctx.Event["pull_request"].(map[string]any); ok {
		if n, ok := pr["number"].(float64); ok {
			if e.PR, err = prNumber(n); err != nil {
				return nil, err
			}
		}
		if labels, ok := pr["labels"].([]any); ok {
			for _, l := range labels {
				if m, ok := l.(map[string]any); ok {
					if name, ok := m["name"].(string); ok {
						e.Labels = append(e.Labels, name)
					}
				}
			}
		}
		e.SHA = str(pr, "head", "sha")
		e.BaseSHA = str(pr, "base", "sha")
		head, base := str(pr, "head", "repo", "full_name"), str(pr, "base", "repo", "full_name")
		e.Fork = head != "" && base != "" && head != base
	}
	// A merge queue's group: its head commit (the PRs merged onto the
	// base) is what the queue asks checks for.
	if mg, ok := ctx.Event["merge_group"].(map[string]any); ok {
		e.SHA = str(mg, "head_sha")
		e.BaseSHA = str(mg, "base_sha")
	}
	if wr, ok := ctx.Event["workflow_run"].(map[string]any); ok {
		if e.Run, err = readWorkflowRun(wr); err != nil {
			return nil, err
		}
	}
	// The payload's commits end up as git arguments (the offline diff
	// checks the base out): anything but a commit ID, e.g.
	// "--upload-pack=…", is refused, not passed on. GITHUB_SHA is the
	// runner's own.
	for _, sha := range []string{e.SHA, e.BaseSHA} {
		if sha != "" && sha != ctx.SHA && !commitID.MatchString(sha) {
			return nil, fmt.Errorf("event payload: %q is not a commit ID", sha)
		}
	}
	return e, nil
}

// readWorkflowRun reads the workflow_run of a workflow_run event.
func readWorkflowRun(wr map[string]any) (*workflowRun, error) {
	run := &workflowRun{
		Event: str(wr, "event"), HeadSHA: str(wr, "head_sha"), HeadBranch: str(wr, "head_branch"),
		HeadOwner: str(wr, "head_repository", "owner", "login"), URL: str(wr, "html_url"),
	}
	if !commitID.MatchString(run.HeadSHA) {
		return nil, fmt.Errorf("event payload: workflow_run.head_sha %q is not a commit ID", run.HeadSHA)
	}
	prs, _ := wr["pull_requests"].([]any)
	for _, p := range prs {
		m, _ := p.(map[string]any)
		n, _ := m["number"].(float64)
		number, err := prNumber(n)
		if err != nil {
			return nil, err
		}
		run.PRs = append(run.PRs, workflowRunPR{Number: number, HeadSHA: str(m, "head", "sha")})
	}
	return run, nil
}

// commitID is a full SHA-1 or SHA-256 object name, as GitHub sends them.
var commitID = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// prNumber is a payload's pull request number, which JSON gives as a
// float: a positive integer, or the payload is not GitHub's.
func prNumber(n float64) (int, error) {
	if n < 1 || n > math.MaxInt32 || n != math.Trunc(n) {
		return 0, fmt.Errorf("event payload: pull request number %v is not a positive integer", n)
	}
	return int(n), nil
}

func str(m map[string]any, keys ...string) string {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[k]
	}
	s, _ := cur.(string)
	return s
}

// resolveMode picks the mode for mode: auto from the event.
func resolveMode(mode, eventName string) (result.Mode, error) {
	switch mode {
	case ModeRollback:
		return result.ModeApply, nil
	case ModeTest: // an offline diff of every unit against nothing
		return result.ModeDiff, nil
	}
	if mode != ModeAuto {
		return result.Mode(mode), nil
	}
	switch eventName {
	case "pull_request", "pull_request_target", "merge_group":
		return result.ModeDiff, nil
	case "push", "workflow_dispatch":
		return result.ModeApply, nil
	case "schedule":
		return result.ModeDrift, nil
	}
	return "", fmt.Errorf("mode 'auto' does not know what to do for event '%s': set the mode input (diff, apply, drift or delete)", eventName)
}

// checkPullRequestTarget refuses a pull_request_target run in auto mode
// whose checkout is not the PR's head. The event runs with the base
// repository's secrets and write token, and actions/checkout checks out
// the base branch by default: the diff would be the base's (empty), and
// reported as a green status on the PR's head. head is the commit checked
// out where the unit lives.
func checkPullRequestTarget(ev *event, head string) error {
	if ev.Name != "pull_request_target" || head == ev.SHA {
		return nil
	}
	return fmt.Errorf("event pull_request_target: the checkout is %s, not the pull request's head %s, so the diff would be of the base branch and would pass on the PR without having looked at it. "+
		"Use the pull_request event (no secrets on forks: an offline diff), or, if you accept running the PR's manifests with this workflow's secrets "+
		"(see \"pull_request_target\" in docs/action.md), check out the head: actions/checkout with ref: ${{ github.event.pull_request.head.sha }} (and, from v7, allow-unsafe-pr-checkout: true)",
		short(head), short(ev.SHA))
}
