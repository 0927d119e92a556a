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
