package github

import (
	"context"
)

// Comment is the sticky comment after UpsertComment.
type Comment struct {
	ID      int64
	Created bool // false when an existing comment was edited
	URL     string
}

// UpsertComment keeps exactly one comment per marker on pull request pr:
// it edits the first comment whose first line is marker and whose author
// is the token's own identity (Login), or creates one, and deletes the
// further pages of a longer earlier report (see SyncComments). Anyone may
// post a comment with the marker (it is in the public workflow); such a
// comment is never edited, so nobody can plant text we would later sign
// off on; and a marker anywhere but the first line (a diff quoting a
// manifest that holds it) is not ours. A body that does not start with
// the marker gets it prepended, so the next run finds it.
func (c *Client) UpsertComment(ctx context.Context, owner, repo string, pr int, marker, body string) (Comment, error) {
	comments, err := c.SyncComments(ctx, owner, repo, pr, marker, []string{body})
	if err != nil {
		return Comment{}, err
	}
	return comments[0], nil
}
