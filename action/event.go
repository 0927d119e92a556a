package action

import (
	"fmt"

	"github.com/sethvargo/go-githubactions"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// event is what a run needs to know about what triggered it.
type event struct {
	Name         string // GITHUB_EVENT_NAME
	Owner, Repo  string
	PR           int    // pull request number, 0 if none
	SHA          string // the commit being deployed or diffed (PR head, pushed commit)
	BaseSHA      string // PR base commit
	Fork         bool   // PR from another repository: expect a read-only token, no secrets
	RunURL       string
	APIURL       string
	WorkspaceDir string
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
			e.PR = int(n)
		}
		e.SHA = str(pr, "head", "sha")
		e.BaseSHA = str(pr, "base", "sha")
		head, base := str(pr, "head", "repo", "full_name"), str(pr, "base", "repo", "full_name")
		e.Fork = head != "" && base != "" && head != base
	}
	return e, nil
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
	if mode != ModeAuto {
		return result.Mode(mode), nil
	}
	switch eventName {
	case "pull_request", "pull_request_target":
		return result.ModeDiff, nil
	case "push", "workflow_dispatch":
		return result.ModeApply, nil
	case "schedule":
		return result.ModeDrift, nil
	}
	return "", fmt.Errorf("mode 'auto' does not know what to do for event '%s': set the mode input (diff, apply, drift or delete)", eventName)
}
