package github

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// PageMarker is the marker of page n of a comment whose first page has
// marker (an HTML comment): page 1 is marker itself, page n the same
// comment with " page=n" inside it, e.g. <!-- kustomize-deploy:unit=web page=2 -->.
func PageMarker(marker string, n int) string {
	if n <= 1 {
		return marker
	}
	return strings.TrimSuffix(marker, " -->") + " page=" + strconv.Itoa(n) + " -->"
}

// pageOf is the page a comment body is for marker's comment, 0 for none:
// only its first line counts, as the tool writes it, exactly. A marker
// anywhere else (a diff quoting a manifest that holds another unit's
// marker) would let one unit's run edit or delete another's comment.
func pageOf(marker, body string) int {
	first := firstLine(body)
	if first == marker {
		return 1
	}
	prefix := strings.TrimSuffix(marker, " -->") + " page="
	rest, ok := strings.CutPrefix(first, prefix)
	if !ok {
		return 0
	}
	digits, ok := strings.CutSuffix(rest, " -->")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 2 || strconv.Itoa(n) != digits {
		return 0
	}
	return n
}

// firstLine is body's first line (GitHub may store a body with CRLF line
// endings).
func firstLine(body string) string {
	first, _, _ := strings.Cut(body, "\n")
	return strings.TrimSuffix(first, "\r")
}

// SyncComments keeps the pull request's comments for marker in step with
// bodies, one comment per page: page n is edited when it exists, created
// when not, and pages beyond len(bodies) left by a longer earlier report
// are deleted. As with UpsertComment, only comments by the token's own
// identity are touched. Page n's body must start with the line
// PageMarker(marker, n); it is prepended when it does not.
func (c *Client) SyncComments(ctx context.Context, owner, repo string, pr int, marker string, bodies []string) ([]Comment, error) {
	where := fmt.Sprintf("%s/%s#%d", owner, repo, pr)
	if marker == "" || !strings.HasSuffix(marker, " -->") {
		return nil, fmt.Errorf("commenting on %s: marker %q is not an HTML comment", where, marker)
	}
	login, err := c.Login(ctx)
	if err != nil {
		return nil, fmt.Errorf("commenting on %s: %w", where, err)
	}
	pages, err := c.findPages(ctx, owner, repo, pr, marker, login)
	if err != nil {
		return nil, wrap(err, "listing comments on %s", where)
	}
	out := make([]Comment, 0, len(bodies))
	for i, body := range bodies {
		n := i + 1
		page := ""
		if len(bodies) > 1 {
			page = fmt.Sprintf(" (page %d)", n)
		}
		if m := PageMarker(marker, n); firstLine(body) != m {
			body = m + "\n" + body
		}
		if id, ok := pages[n]; ok {
			ic, _, err := c.api.Issues.EditComment(ctx, owner, repo, id, &gh.IssueComment{Body: gh.String(body)})
			if err != nil {
				return out, wrap(err, "updating comment %d%s on %s", id, page, where)
			}
			out = append(out, Comment{ID: ic.GetID(), URL: ic.GetHTMLURL()})
			continue
		}
		ic, _, err := c.api.Issues.CreateComment(ctx, owner, repo, pr, &gh.IssueComment{Body: gh.String(body)})
		if err != nil {
			return out, wrap(err, "creating comment%s on %s", page, where)
		}
		out = append(out, Comment{ID: ic.GetID(), Created: true, URL: ic.GetHTMLURL()})
	}
	for n, id := range pages {
		if n <= len(bodies) {
			continue
		}
		if _, err := c.api.Issues.DeleteComment(ctx, owner, repo, id); err != nil {
			return out, wrap(err, "deleting comment %d (page %d, no longer needed) on %s", id, n, where)
		}
	}
	return out, nil
}

// findPages pages through the pull request's comments, oldest first, and
// returns the first comment by author for each page of marker's comment.
func (c *Client) findPages(ctx context.Context, owner, repo string, pr int, marker, author string) (map[int]int64, error) {
	pages := map[int]int64{}
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := c.api.Issues.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return nil, err
		}
		for _, ic := range comments {
			if !strings.EqualFold(ic.GetUser().GetLogin(), author) {
				continue
			}
			if n := pageOf(marker, ic.GetBody()); n > 0 {
				if _, seen := pages[n]; !seen {
					pages[n] = ic.GetID()
				}
			}
		}
		if resp.NextPage == 0 {
			return pages, nil
		}
		opts.Page = resp.NextPage
	}
}
