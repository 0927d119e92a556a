package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v62/github"
)

// MaxListed bounds what the listings below read of a repository: pages
// of 100, at most this many items, as Flux Operator bounds its input
// providers' results.
const MaxListed = 10000

// OpenPull is an open pull request as a Flux Operator
// GitHubPullRequest input provider exports it.
type OpenPull struct {
	Number           int
	HeadRef, HeadSHA string
	Title, Author    string
	Labels           []string
}

// Ref is a branch or a tag, with the commit it points at.
type Ref struct{ Name, SHA string }

// ListOpenPulls lists the open pull requests of owner/repo, newest
// first, as GitHub orders them.
func (c *Client) ListOpenPulls(ctx context.Context, owner, repo string) ([]OpenPull, error) {
	var out []OpenPull
	opts := &gh.PullRequestListOptions{State: "open", ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		prs, resp, err := c.api.PullRequests.List(ctx, owner, repo, opts)
		if err != nil {
			return nil, wrap(err, "listing the open pull requests of %s/%s", owner, repo)
		}
		for _, pr := range prs {
			p := OpenPull{Number: pr.GetNumber(), HeadRef: pr.GetHead().GetRef(), HeadSHA: pr.GetHead().GetSHA(), Title: pr.GetTitle(), Author: pr.GetUser().GetLogin()}
			for _, l := range pr.Labels {
				p.Labels = append(p.Labels, l.GetName())
			}
			out = append(out, p)
		}
		if len(out) > MaxListed {
			return nil, fmt.Errorf("%s/%s has more than %d open pull requests", owner, repo, MaxListed)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// ListBranches lists the branches of owner/repo.
func (c *Client) ListBranches(ctx context.Context, owner, repo string) ([]Ref, error) {
	var out []Ref
	opts := &gh.BranchListOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		bs, resp, err := c.api.Repositories.ListBranches(ctx, owner, repo, opts)
		if err != nil {
			return nil, wrap(err, "listing the branches of %s/%s", owner, repo)
		}
		for _, b := range bs {
			out = append(out, Ref{Name: b.GetName(), SHA: b.GetCommit().GetSHA()})
		}
		if len(out) > MaxListed {
			return nil, fmt.Errorf("%s/%s has more than %d branches", owner, repo, MaxListed)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// ListTags lists the tags of owner/repo.
func (c *Client) ListTags(ctx context.Context, owner, repo string) ([]Ref, error) {
	var out []Ref
	opts := &gh.ListOptions{PerPage: 100}
	for {
		ts, resp, err := c.api.Repositories.ListTags(ctx, owner, repo, opts)
		if err != nil {
			return nil, wrap(err, "listing the tags of %s/%s", owner, repo)
		}
		for _, t := range ts {
			out = append(out, Ref{Name: t.GetName(), SHA: t.GetCommit().GetSHA()})
		}
		if len(out) > MaxListed {
			return nil, fmt.Errorf("%s/%s has more than %d tags", owner, repo, MaxListed)
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
