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
// and at most maxPages pages, as the operator bounds its own listings (a
// repository with more items than that is an error, not a silent cut; so
// is a server answering with a page it already gave).

// maxPages bounds the pages one listing reads.
const maxPages = 1000

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
// repositories' URLs begin: the one WithServerURL named (the job's
// GITHUB_SERVER_URL), else guessed from the API's address:
// https://github.com for https://api.github.com/, https://acme.ghe.com
// for https://api.acme.ghe.com/, https://ghe.example for
// https://ghe.example/api/v3/, and the scheme and host of any other API
// URL (a test server's).
func (c *Client) WebURL() string {
	if c.server != "" {
		return c.server
	}
	u := *c.api.BaseURL
	if host, ok := strings.CutPrefix(strings.ToLower(u.Host), "api."); ok {
		u.Host = host
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// OpenPulls visits the open pull requests of owner/repo, newest first,
// until visit returns false.
func (c *Client) OpenPulls(ctx context.Context, owner, repo string, visit func(Pull) bool) error {
	opts := &gh.PullRequestListOptions{State: "open", ListOptions: gh.ListOptions{PerPage: 100}}
	return list(fmt.Sprintf("the open pull requests of %s/%s", owner, repo), &opts.ListOptions,
		func() ([]*gh.PullRequest, *gh.Response, error) {
			return c.api.PullRequests.List(ctx, owner, repo, opts)
		},
		func(pr *gh.PullRequest) bool {
			p := Pull{Number: pr.GetNumber(), Title: pr.GetTitle(), Author: pr.GetUser().GetLogin(), HeadRef: pr.GetHead().GetRef(), HeadSHA: pr.GetHead().GetSHA()}
			p.Labels = make([]string, len(pr.Labels))
			for i, l := range pr.Labels {
				p.Labels[i] = l.GetName()
			}
			return visit(p)
		})
}

// Branches visits the branches of owner/repo until visit returns false.
func (c *Client) Branches(ctx context.Context, owner, repo string, visit func(Ref) bool) error {
	opts := &gh.BranchListOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	return list(fmt.Sprintf("the branches of %s/%s", owner, repo), &opts.ListOptions,
		func() ([]*gh.Branch, *gh.Response, error) {
			return c.api.Repositories.ListBranches(ctx, owner, repo, opts)
		},
		func(b *gh.Branch) bool { return visit(Ref{Name: b.GetName(), SHA: b.GetCommit().GetSHA()}) })
}

// Tags visits the tags of owner/repo until visit returns false.
func (c *Client) Tags(ctx context.Context, owner, repo string, visit func(Ref) bool) error {
	opts := &gh.ListOptions{PerPage: 100}
	return list(fmt.Sprintf("the tags of %s/%s", owner, repo), opts,
		func() ([]*gh.RepositoryTag, *gh.Response, error) {
			return c.api.Repositories.ListTags(ctx, owner, repo, opts)
		},
		func(t *gh.RepositoryTag) bool { return visit(Ref{Name: t.GetName(), SHA: t.GetCommit().GetSHA()}) })
}

// list reads what (its pages set in page) with fetch, a page at a time,
// handing each item to visit until it returns false.
func list[T any](what string, page *gh.ListOptions, fetch func() ([]T, *gh.Response, error), visit func(T) bool) error {
	seen := map[int]bool{}
	for n := 1; ; n++ {
		if n > maxPages {
			return fmt.Errorf("listing %s: more than %d pages", what, maxPages)
		}
		if seen[page.Page] {
			return fmt.Errorf("listing %s: GitHub gave page %d again", what, page.Page)
		}
		seen[page.Page] = true
		items, resp, err := fetch()
		if err != nil {
			return wrap(err, "listing %s", what)
		}
		for _, it := range items {
			if !visit(it) {
				return nil
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		page.Page = resp.NextPage
	}
}
