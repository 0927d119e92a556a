package github

import (
	"context"
	"encoding/json"

	gh "github.com/google/go-github/v62/github"
)

// Dispatch sends a repository_dispatch event of eventType with payload
// (a JSON object) to owner/repo: workflows `on: repository_dispatch` run.
func (c *Client) Dispatch(ctx context.Context, owner, repo, eventType string, payload json.RawMessage) error {
	if _, _, err := c.api.Repositories.Dispatch(ctx, owner, repo, gh.DispatchRequestOptions{EventType: eventType, ClientPayload: &payload}); err != nil {
		return wrap(err, "sending repository_dispatch %s to %s/%s", eventType, owner, repo)
	}
	return nil
}
