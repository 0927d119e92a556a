package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// Comment is the sticky comment after UpsertComment.
type Comment struct {
	ID      int64
	Created bool // false when an existing comment was edited
	URL     string
}

// UpsertComment keeps exactly one comment per marker on pull request pr:
// it edits the first comment whose body contains marker and whose author
// is the token's own identity (Login), or creates one. Anyone may post a
// comment with the marker (it is in the public workflow); such a comment
// is never edited, so nobody can plant text we would later sign off on.
// A body that lacks the marker gets it prepended, so the next run finds it.
func (c *Client) UpsertComment(ctx context.Context, owner, repo string, pr int, marker, body string) (Comment, error) {
	where := fmt.Sprintf("%s/%s#%d", owner, repo, pr)
	if marker == "" {
		return Comment{}, fmt.Errorf("commenting on %s: empty marker would match every comment", where)
	}
	if !strings.Contains(body, marker) {
		body = marker + "\n" + body
	}

	login, err := c.Login(ctx)
	if err != nil {
		return Comment{}, fmt.Errorf("commenting on %s: %w", where, err)
	}
	id, err := c.findComment(ctx, owner, repo, pr, marker, login)
	if err != nil {
		return Comment{}, wrap(err, "listing comments on %s", where)
	}
	if id != 0 {
		ic, _, err := c.api.Issues.EditComment(ctx, owner, repo, id, &gh.IssueComment{Body: gh.String(body)})
		if err != nil {
			return Comment{}, wrap(err, "updating comment %d on %s", id, where)
		}
		return Comment{ID: ic.GetID(), URL: ic.GetHTMLURL()}, nil
	}
	ic, _, err := c.api.Issues.CreateComment(ctx, owner, repo, pr, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return Comment{}, wrap(err, "creating comment on %s", where)
	}
	return Comment{ID: ic.GetID(), Created: true, URL: ic.GetHTMLURL()}, nil
}

// findComment pages through the pull request's comments, oldest first, and
// returns the ID of the first by author whose body contains marker, or 0.
func (c *Client) findComment(ctx context.Context, owner, repo string, pr int, marker, author string) (int64, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := c.api.Issues.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return 0, err
		}
		for _, ic := range comments {
			if strings.Contains(ic.GetBody(), marker) && strings.EqualFold(ic.GetUser().GetLogin(), author) {
				return ic.GetID(), nil
			}
		}
		if resp.NextPage == 0 {
			return 0, nil
		}
		opts.Page = resp.NextPage
	}
}
