package github

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// What a repository holds, as Flux Operator's ResourceSetInputProviders
// read it (GitHubPullRequest, GitHubBranch, GitHubTag): listed a page of
// 100 at a time, each item handed to a visitor that may stop the listing,
// and at most maxPages pages (a repository with more items than that is
// an error, not a silent cut).

// maxPages bounds the pages one listing reads.
const maxPages = 100

// Pull is an open pull request.
type Pull struct {
	Number  int
	Title   string
	Author  string
	HeadRef string
	HeadSHA string
	Labels  []string
}

// Ref is a branch or a tag and the commit it points at.
type Ref struct {
	Name, SHA string
}

// WebURL is the address of the GitHub server the client talks to, as its
// repositories' URLs begin: https://github.com for https://api.github.com/,
// https://ghe.example for https://ghe.example/api/v3/, and the scheme and
// host of any other API URL (a test server's).
func (c *Client) WebURL() string {
	u := *c.api.BaseURL
	if strings.EqualFold(u.Host, "api.github.com") {
		return "https://github.com"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// OpenPulls visits the open pull requests of owner/repo, newest first,
// until visit returns false.
func (c *Client) OpenPulls(ctx context.Context, owner, repo string, visit func(Pull) bool) error {
	opts := &gh.PullRequestListOptions{State: "open", ListOptions: gh.ListOptions{PerPage: 100}}
	for page := 1; ; page++ {
		if page > maxPages {
			return fmt.Errorf("listing the open pull requests of %s/%s: more than %d pages", owner, repo, maxPages)
		}
		prs, resp, err := c.api.PullRequests.List(ctx, owner, repo, opts)
		if err != nil {
			return wrap(err, "listing the open pull requests of %s/%s", owner, repo)
		}
		for _, pr := range prs {
			p := Pull{Number: pr.GetNumber(), Title: pr.GetTitle(), Author: pr.GetUser().GetLogin(), HeadRef: pr.GetHead().GetRef(), HeadSHA: pr.GetHead().GetSHA()}
			p.Labels = make([]string, len(pr.Labels))
			for i, l := range pr.Labels {
				p.Labels[i] = l.GetName()
			}
			if !visit(p) {
				return nil
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// Branches visits the branches of owner/repo until visit returns false.
func (c *Client) Branches(ctx context.Context, owner, repo string, visit func(Ref) bool) error {
	opts := &gh.BranchListOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for page := 1; ; page++ {
		if page > maxPages {
			return fmt.Errorf("listing the branches of %s/%s: more than %d pages", owner, repo, maxPages)
		}
		branches, resp, err := c.api.Repositories.ListBranches(ctx, owner, repo, opts)
		if err != nil {
			return wrap(err, "listing the branches of %s/%s", owner, repo)
		}
		for _, b := range branches {
			if !visit(Ref{Name: b.GetName(), SHA: b.GetCommit().GetSHA()}) {
				return nil
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// Tags visits the tags of owner/repo until visit returns false.
func (c *Client) Tags(ctx context.Context, owner, repo string, visit func(Ref) bool) error {
	opts := &gh.ListOptions{PerPage: 100}
	for page := 1; ; page++ {
		if page > maxPages {
			return fmt.Errorf("listing the tags of %s/%s: more than %d pages", owner, repo, maxPages)
		}
		tags, resp, err := c.api.Repositories.ListTags(ctx, owner, repo, opts)
		if err != nil {
			return wrap(err, "listing the tags of %s/%s", owner, repo)
		}
		for _, t := range tags {
			if !visit(Ref{Name: t.GetName(), SHA: t.GetCommit().GetSHA()}) {
				return nil
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}
