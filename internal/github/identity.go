package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// Login returns the login GitHub shows as the author of what the token
// writes. A personal access token, an OAuth token or a GitHub App's user
// token act as their user, whom GET /user names. An installation token
// (the workflow's GITHUB_TOKEN, a GitHub App's installation token) has no
// REST "me" (GET /user answers 403); GraphQL's viewer is then the app's
// bot, shown as "<login>[bot]" in REST answers ("github-actions[bot]" for
// GITHUB_TOKEN). The answer is kept for the client's lifetime.
func (c *Client) Login(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.login != "" {
		return c.login, nil
	}
	u, _, err := c.api.Users.Get(ctx, "")
	switch {
	case err == nil && u.GetLogin() != "":
		c.login = u.GetLogin()
		return c.login, nil
	case err == nil:
		return "", errors.New("finding the token's identity: GET /user named no login")
	case !isStatus(err, http.StatusUnauthorized, http.StatusForbidden):
		return "", wrap(err, "finding the token's identity")
	}
	login, err := c.viewer(ctx)
	if err != nil {
		return "", wrap(err, "finding the token's identity (an installation token: GraphQL viewer)")
	}
	if !strings.HasSuffix(login, "[bot]") {
		login += "[bot]"
	}
	c.login = login
	return c.login, nil
}

// viewer asks GraphQL for the token's login.
func (c *Client) viewer(ctx context.Context) (string, error) {
	req, err := c.api.NewRequest(http.MethodPost, c.graphql, map[string]string{"query": "query { viewer { login } }"})
	if err != nil {
		return "", err
	}
	var out struct {
		Data struct {
			Viewer struct {
				Login string `json:"login"`
			} `json:"viewer"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := c.api.Do(ctx, req, &out); err != nil {
		return "", err
	}
	if len(out.Errors) > 0 {
		return "", fmt.Errorf("GraphQL: %s", out.Errors[0].Message)
	}
	if out.Data.Viewer.Login == "" {
		return "", errors.New("GraphQL viewer has no login")
	}
	return out.Data.Viewer.Login, nil
}

// isStatus reports whether err is GitHub's answer with one of codes.
func isStatus(err error, codes ...int) bool {
	var resp *gh.ErrorResponse
	if !errors.As(err, &resp) || resp.Response == nil {
		return false
	}
	for _, c := range codes {
		if resp.Response.StatusCode == c {
			return true
		}
	}
	return false
}
