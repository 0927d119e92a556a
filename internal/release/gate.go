package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"time"
)

// The release gate: nothing is published for a tag unless its commit is on
// the main branch and the CI workflow passed for that very commit.
// .github/workflows/release.yml runs it (cmd/release-gate) before any
// image is pushed or tag moved.

// CheckOnMain returns an error unless commit is an ancestor of (or is)
// mainRef in the git work tree dir: a tag pushed from a branch, a fork's
// commit or an unmerged PR never becomes a release.
func CheckOnMain(ctx context.Context, dir, commit, mainRef string) error {
	cmd := exec.CommandContext(ctx, "git", "merge-base", "--is-ancestor", commit, mainRef)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return fmt.Errorf("commit %s is not on %s: release only commits merged to main", commit, mainRef)
	default:
		return fmt.Errorf("git merge-base --is-ancestor %s %s: %v: %s", commit, mainRef, err, strings.TrimSpace(string(out)))
	}
}

// CIGate is where and how long to look for a passed CI run.
type CIGate struct {
	// APIURL is GitHub's REST API (GITHUB_API_URL), Token a token that
	// may read the repository's Actions runs.
	APIURL, Token string
	// Repository is owner/name, Workflow the CI workflow's file name
	// (ci.yml), Commit the full SHA that is released.
	Repository, Workflow, Commit string
	// Wait is how long runs still queued or in progress (or not yet
	// created: the tag may be pushed with the commit) are waited for,
	// polling every Poll.
	Wait, Poll time.Duration
	HTTPClient *http.Client
}

// DefaultCIGate waits up to an hour, as long as the CI workflow may run,
// polling every 30 seconds.
func DefaultCIGate() CIGate {
	return CIGate{Workflow: "ci.yml", Wait: 60 * time.Minute, Poll: 30 * time.Second, HTTPClient: http.DefaultClient}
}

// workflowRun is what the gate reads of a run.
type workflowRun struct {
	HTMLURL    string `json:"html_url"`
	Event      string `json:"event"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
}

// WaitForCI returns nil once a run of the CI workflow for g.Commit has
// concluded "success". It fails when every run concluded otherwise, and
// when none passed within g.Wait; each error names the runs it saw.
func (g CIGate) WaitForCI(ctx context.Context) error {
	deadline := time.Now().Add(g.Wait)
	for {
		runs, err := g.runs(ctx)
		if err != nil {
			return err
		}
		pending := false
		for _, r := range runs {
			if r.Status == "completed" && r.Conclusion == "success" {
				return nil
			}
			if r.Status != "completed" {
				pending = true
			}
		}
		if len(runs) > 0 && !pending {
			return fmt.Errorf("workflow %s did not pass for commit %s: %s", g.Workflow, g.Commit, describeRuns(runs))
		}
		if !time.Now().Add(g.Poll).Before(deadline) {
			if len(runs) == 0 {
				return fmt.Errorf("workflow %s has no run for commit %s after %s: push the commit to main and let CI pass before tagging it", g.Workflow, g.Commit, g.Wait)
			}
			return fmt.Errorf("workflow %s has not passed for commit %s after %s: %s", g.Workflow, g.Commit, g.Wait, describeRuns(runs))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(g.Poll):
		}
	}
}

func describeRuns(runs []workflowRun) string {
	var out []string
	for _, r := range runs {
		state := r.Status
		if r.Status == "completed" {
			state = r.Conclusion
		}
		out = append(out, fmt.Sprintf("%s (%s) %s", r.HTMLURL, r.Event, state))
	}
	return strings.Join(out, ", ")
}

// runs lists the CI workflow's runs for the commit (GET
// /repos/{owner}/{repo}/actions/workflows/{workflow}/runs?head_sha=...).
func (g CIGate) runs(ctx context.Context) ([]workflowRun, error) {
	u := fmt.Sprintf("%s/repos/%s/actions/workflows/%s/runs?head_sha=%s&per_page=100",
		strings.TrimSuffix(g.APIURL, "/"), g.Repository, url.PathEscape(g.Workflow), url.QueryEscape(g.Commit))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	if g.Token != "" {
		req.Header.Set("Authorization", "Bearer "+g.Token)
	}
	client := g.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("listing runs of workflow %s: %w", g.Workflow, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 10<<20))
	if err != nil {
		return nil, fmt.Errorf("listing runs of workflow %s: %w", g.Workflow, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("listing runs of workflow %s: %s: %s", g.Workflow, resp.Status, strings.TrimSpace(string(body)))
	}
	var list struct {
		Runs []workflowRun `json:"workflow_runs"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("listing runs of workflow %s: %w", g.Workflow, err)
	}
	return list.Runs, nil
}
