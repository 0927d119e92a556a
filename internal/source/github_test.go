package source

import (
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
)

// A GitRepository with provider github is fetched with the job's GitHub
// token, from the job's GitHub server only: a repository elsewhere is
// refused before any request (the token goes nowhere else), a run
// without a token says so with the fix that gets past it. (A GitHub
// App's secretRef: TestResolveGitRepositoryWithGitHubApp.)
func TestResolveGitRepositoryWithProviderGitHub(t *testing.T) {
	t.Parallel()
	const token = "ghs_j0bT0k3n"
	github, elsewhere := gittest.NewServer(t), gittest.NewServer(t)
	github.Repo("fleet").Commit("one", map[string]string{"apps/x.yaml": "x: 1\n"})
	github.RequireAuth("fleet", "x-access-token", token)
	elsewhere.Repo("fleet").Commit("one", map[string]string{"apps/x.yaml": "x: 1\n"})
	source := func(url, secret string) *config.Source {
		return &config.Source{Kind: "GitRepository", Ref: config.Ref{Namespace: "ns", Name: "fleet"}, File: "sources.yaml", Line: 4, URL: url,
			Git: &config.GitSpec{Provider: "github", SecretName: secret}}
	}
	for _, tc := range []struct {
		name   string
		src    *config.Source
		token  string
		err    string
		fix    Fix
		server *gittest.Server // never called
	}{
		{name: "the job's server", src: source(github.URL+"/fleet", ""), token: token},
		{name: "another server", src: source(elsewhere.URL+"/fleet", ""), token: token, server: elsewhere,
			err: "spec.provider github: the repository is not on the job's GitHub server (" + github.URL + "), the only one its token is sent to"},
		{name: "no token", src: source(github.URL+"/fleet", ""), err: "spec.provider github: the run has no GitHub token to fetch it with", fix: FixGitHubToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResolver(Options{Set: &config.Set{Sources: []*config.Source{tc.src}}, Root: t.TempDir(), Fetch: true, GitHubToken: tc.token, GitHubServer: github.URL})
			defer r.Close()
			var before int
			if tc.server != nil {
				before = tc.server.Calls("fleet")
			}
			got, err := r.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "ns", Name: "apps"}, Path: "apps",
				Source: config.SourceRef{Kind: "GitRepository", Namespace: "ns", Name: "fleet"}})
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got.Checkout || got.Revision == "" {
					t.Errorf("fetched %+v", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), token) {
				t.Errorf("error %v, want %q (and no token)", err, tc.err)
			}
			if FixOf(err) != tc.fix {
				t.Errorf("fix %q, want %q", FixOf(err), tc.fix)
			}
			if tc.server != nil && tc.server.Calls("fleet") != before {
				t.Errorf("%s was sent %d request(s)", tc.server.URL, tc.server.Calls("fleet")-before)
			}
		})
	}
}
