package github

import (
	"context"

	gh "github.com/google/go-github/v62/github"
)

// MergedPullRequestLabels are the labels of the merged pull requests that
// contain commit sha (the one whose merge pushed it), none when no merged
// pull request does.
func (c *Client) MergedPullRequestLabels(ctx context.Context, owner, repo, sha string) ([]string, error) {
	var labels []string
	opts := &gh.ListOptions{PerPage: 100}
	for {
		prs, resp, err := c.api.PullRequests.ListPullRequestsWithCommit(ctx, owner, repo, sha, opts)
		if err != nil {
			return nil, wrap(err, "listing the pull requests of %s/%s@%s", owner, repo, sha)
		}
		for _, pr := range prs {
			if pr.MergedAt == nil {
				continue
			}
			for _, l := range pr.Labels {
				labels = append(labels, l.GetName())
			}
		}
		if resp.NextPage == 0 {
			return labels, nil
		}
		opts.Page = resp.NextPage
	}
}

// PullRequest is an open pull request, as GitHub knows it.
type PullRequest struct {
	Number  int
	HeadSHA string
	// HeadRepo is the full name (owner/name) of the repository its head
	// branch is in: a fork's for a fork's pull request.
	HeadRepo string
}

// OpenPullRequests are the open pull requests of owner/repo whose head is
// branch in headOwner's repository (a fork's owner, or owner).
func (c *Client) OpenPullRequests(ctx context.Context, owner, repo, headOwner, branch string) ([]PullRequest, error) {
	var out []PullRequest
	opts := &gh.PullRequestListOptions{State: "open", Head: headOwner + ":" + branch, ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		prs, resp, err := c.api.PullRequests.List(ctx, owner, repo, opts)
		if err != nil {
			return nil, wrap(err, "listing the open pull requests of %s/%s from %s:%s", owner, repo, headOwner, branch)
		}
		for _, pr := range prs {
			out = append(out, PullRequest{Number: pr.GetNumber(), HeadSHA: pr.GetHead().GetSHA(), HeadRepo: pr.GetHead().GetRepo().GetFullName()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
