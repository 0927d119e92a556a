package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// Issue is an issue UpsertIssue or FindIssue found or made.
type Issue struct {
	Number  int // 0: none
	URL     string
	Created bool // false when an existing issue was edited
}

// IssueSpec is the one open issue to keep per marker.
type IssueSpec struct {
	// Label is on every such issue; listing by it keeps the search
	// short. Created in the repository, with LabelColor and
	// LabelDescription, when missing.
	Label, LabelColor, LabelDescription string
	// Marker, a hidden HTML comment, the body's first line, tells issues
	// of one label apart: one per unit and cluster.
	Marker string
	// Title is set when the issue is created; later edits keep whatever
	// title people gave it since.
	Title string
	Body  string
}

// ErrUnlabelled is wrapped by UpsertIssue's error when it created the
// issue but GitHub dropped its label (a token without push access) and
// would not add it: later runs, which list by label, will not find it.
var ErrUnlabelled = errors.New("created without its label")

// UpsertIssue keeps exactly one open issue per marker: it edits the body
// of the open issue FindIssue returns, or creates one. As with comments,
// an issue someone else opened with the marker is never edited.
func (c *Client) UpsertIssue(ctx context.Context, owner, repo string, s IssueSpec) (Issue, error) {
	where := fmt.Sprintf("%s/%s", owner, repo)
	if firstLine(s.Body) != s.Marker {
		s.Body = s.Marker + "\n" + s.Body
	}
	found, err := c.FindIssue(ctx, owner, repo, s.Label, s.Marker)
	if err != nil {
		return Issue{}, err
	}
	if found.Number != 0 {
		is, _, err := c.api.Issues.Edit(ctx, owner, repo, found.Number, &gh.IssueRequest{Body: gh.String(s.Body)})
		if err != nil {
			return found, wrap(err, "updating issue %s#%d", where, found.Number)
		}
		return Issue{Number: is.GetNumber(), URL: is.GetHTMLURL()}, nil
	}

	// The label first, through its own endpoint: GitHub creates missing
	// labels when an issue names them, but not for every token, and
	// "Create a label" is the documented way (422 when it exists).
	labelErr := c.createLabel(ctx, owner, repo, s)
	is, _, err := c.api.Issues.Create(ctx, owner, repo, &gh.IssueRequest{
		Title: gh.String(s.Title), Body: gh.String(s.Body), Labels: &[]string{s.Label},
	})
	if err != nil {
		return Issue{}, wrap(err, "creating issue %q in %s", s.Title, where)
	}
	out := Issue{Number: is.GetNumber(), URL: is.GetHTMLURL(), Created: true}
	if hasLabel(is, s.Label) {
		return out, nil
	}
	// GitHub drops labels silently from issues created by tokens without
	// push access; adding one afterwards may still be allowed.
	if _, _, err := c.api.Issues.AddLabelsToIssue(ctx, owner, repo, out.Number, []string{s.Label}); err != nil {
		return out, fmt.Errorf("issue %s#%d %w %q (later runs find the issue by it, and would open another): %w",
			where, out.Number, ErrUnlabelled, s.Label, errors.Join(labelErr, wrap(err, "adding the label")))
	}
	return out, nil
}

// createLabel creates s.Label in the repository; nil when it already
// exists.
func (c *Client) createLabel(ctx context.Context, owner, repo string, s IssueSpec) error {
	l := &gh.Label{Name: gh.String(s.Label)}
	if s.LabelColor != "" {
		l.Color = gh.String(s.LabelColor)
	}
	if s.LabelDescription != "" {
		l.Description = gh.String(s.LabelDescription)
	}
	_, _, err := c.api.Issues.CreateLabel(ctx, owner, repo, l)
	if err == nil || isStatus(err, http.StatusUnprocessableEntity) { // already_exists
		return nil
	}
	return wrap(err, "creating label %q in %s/%s", s.Label, owner, repo)
}

func hasLabel(is *gh.Issue, name string) bool {
	for _, l := range is.Labels {
		if strings.EqualFold(l.GetName(), name) {
			return true
		}
	}
	return false
}

// FindIssue returns the oldest open issue labelled label whose body's
// first line is marker (as UpsertIssue writes it; anywhere else it may be
// quoted from a manifest) and whose author is the token's own identity (Login);
// Number 0 when there is none. Pull requests, which the API lists with
// issues, are never returned.
func (c *Client) FindIssue(ctx context.Context, owner, repo, label, marker string) (Issue, error) {
	where := fmt.Sprintf("%s/%s", owner, repo)
	if marker == "" || label == "" {
		return Issue{}, fmt.Errorf("finding an issue in %s: an empty marker or label would match every issue", where)
	}
	login, err := c.Login(ctx)
	if err != nil {
		return Issue{}, fmt.Errorf("finding an issue in %s: %w", where, err)
	}
	opts := &gh.IssueListByRepoOptions{
		State: "open", Labels: []string{label}, Sort: "created", Direction: "asc",
		ListOptions: gh.ListOptions{PerPage: 100},
	}
	for {
		list, resp, err := c.api.Issues.ListByRepo(ctx, owner, repo, opts)
		if err != nil {
			return Issue{}, wrap(err, "listing issues labelled %q in %s", label, where)
		}
		for _, is := range list {
			if !is.IsPullRequest() && firstLine(is.GetBody()) == marker && strings.EqualFold(is.GetUser().GetLogin(), login) {
				return Issue{Number: is.GetNumber(), URL: is.GetHTMLURL()}, nil
			}
		}
		if resp.NextPage == 0 {
			return Issue{}, nil
		}
		opts.Page = resp.NextPage
	}
}

// CloseIssue posts comment on issue number, then closes it as completed:
// whoever follows the issue is told why it closed.
func (c *Client) CloseIssue(ctx context.Context, owner, repo string, number int, comment string) error {
	where := fmt.Sprintf("%s/%s#%d", owner, repo, number)
	if comment != "" {
		if _, _, err := c.api.Issues.CreateComment(ctx, owner, repo, number, &gh.IssueComment{Body: gh.String(comment)}); err != nil {
			return wrap(err, "commenting on issue %s", where)
		}
	}
	_, _, err := c.api.Issues.Edit(ctx, owner, repo, number, &gh.IssueRequest{State: gh.String("closed"), StateReason: gh.String("completed")})
	if err != nil {
		return wrap(err, "closing issue %s", where)
	}
	return nil
}
