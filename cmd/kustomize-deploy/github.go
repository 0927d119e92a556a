package main

import (
	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
)

// github is the GitHub client the ResourceSetInputProviders of a GitHub
// type (pull requests, branches, tags) are read with: GITHUB_TOKEN, as
// GitHub Actions and the GitHub CLI set it, against GITHUB_API_URL
// (github.com's API when unset; https://HOST/api/v3 for GitHub Enterprise
// Server), for the repositories of GITHUB_SERVER_URL (guessed from the
// API's address when unset) and no other server's. Nil when GITHUB_TOKEN is unset: those providers then fail
// their unit, saying so. The token is masked in everything printed.
func (e *env) github() (resourceset.GitHub, error) {
	token := e.getenv("GITHUB_TOKEN")
	if token == "" {
		return nil, nil
	}
	e.masker.Add(token)
	c, err := github.New(token, e.getenv("GITHUB_API_URL"), github.WithServerURL(e.getenv("GITHUB_SERVER_URL")))
	if err != nil {
		return nil, usagef("GITHUB_API_URL: %v", err)
	}
	return c, nil
}

// resourceSets are the options ResourceSets are expanded with: the
// GitHub client, and a cache of its answers for this run.
func (e *env) resourceSets() (resourceset.Options, error) {
	gh, err := e.github()
	return resourceset.Options{GitHub: gh, Cache: &resourceset.Cache{}}, err
}
