package github

import (
	"context"
	"fmt"
	"unicode/utf8"

	gh "github.com/google/go-github/v62/github"
)

// Commit status states.
const (
	StatePending = "pending"
	StateSuccess = "success"
	StateFailure = "failure"
	StateError   = "error"
)

// maxDescription is where GitHub cuts a status description, in characters.
const maxDescription = 140

// Status is one commit status.
type Status struct {
	State       string // pending, success, failure or error
	Context     string // kustomize-deploy/<unit>
	Description string // cut to 140 characters, ending in …
	TargetURL   string
}

// SetStatus sets s on commit sha; a later status with the same context
// replaces it.
func (c *Client) SetStatus(ctx context.Context, owner, repo, sha string, s Status) error {
	where := fmt.Sprintf("setting status %s on %s/%s@%s", s.Context, owner, repo, sha)
	switch s.State {
	case StatePending, StateSuccess, StateFailure, StateError:
	default:
		return fmt.Errorf("%s: state %q is not pending, success, failure or error", where, s.State)
	}
	if s.Context == "" {
		return fmt.Errorf("%s: empty context", where)
	}
	rs := &gh.RepoStatus{State: gh.String(s.State), Context: gh.String(s.Context)}
	if s.Description != "" {
		rs.Description = gh.String(truncate(s.Description, maxDescription))
	}
	if s.TargetURL != "" {
		rs.TargetURL = gh.String(s.TargetURL)
	}
	if _, _, err := c.api.Repositories.CreateStatus(ctx, owner, repo, sha, rs); err != nil {
		return wrap(err, "%s", where)
	}
	return nil
}

// truncate cuts s to at most n characters, the last being … when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
