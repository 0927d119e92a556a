package source

import (
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
)

// A HelmRelease's chart from a GitRepository resolves as a unit's source
// does: the mapped directory, this checkout, else the repository fetched
// once per run and shared with the units built from it; with fetching
// off, or a GitRepository not in the configuration, it fails naming the
// GitRepository and how to map it.
func TestChartTreeResolvesGitRepositories(t *testing.T) {
	t.Parallel()
	srv := gittest.NewServer(t)
	charts := srv.Repo("charts")
	head := charts.Commit("one", map[string]string{"charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n"})
	set := &config.Set{Sources: []*config.Source{
		{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "charts"}, File: "clusters/prod/sources.yaml", Line: 7, URL: charts.URL, Git: &config.GitSpec{}},
		{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "fleet"}, File: "clusters/prod/sources.yaml", Line: 20, URL: "https://github.com/acme/fleet"},
	}}
	chartsRef := config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "charts"}
	mappedDir := t.TempDir()
	for _, tc := range []struct {
		name     string
		ref      config.SourceRef
		mapped   bool
		fetch    bool
		dir      string // "root", "mapped", "fetched"
		revision string
		err      []string
	}{
		{name: "fetched", ref: chartsRef, fetch: true, dir: "fetched", revision: "master@sha1:" + head},
		{name: "mapped wins over fetching", ref: chartsRef, mapped: true, fetch: true, dir: "mapped", revision: "(mapped " + mappedDir + ")"},
		{name: "this repository", ref: config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "fleet"}, fetch: true, dir: "root", revision: "abc123"},
		{name: "fetching off", ref: chartsRef, err: []string{
			"GitRepository flux-system/charts (clusters/prod/sources.yaml:7) is another repository, " + charts.URL,
			"fetching sources is off: fetch it, or check it out and map it"}},
		{name: "not in the configuration", ref: config.SourceRef{Kind: "GitRepository", Namespace: "apps", Name: "nope"}, fetch: true, err: []string{
			"GitRepository apps/nope is not among the configuration's objects"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			r := &Resolver{set: set, root: root, identity: Identity{Remote: "https://github.com/acme/fleet"}, revision: "abc123"}
			if tc.fetch {
				r.fetcher = &fetcher{}
			}
			if tc.mapped {
				r.mapped = map[config.SourceRef]string{{Kind: "GitRepository", Namespace: "flux-system", Name: "charts"}: mappedDir}
			}
			defer r.Close()
			got, err := r.ChartTree(t.Context(), tc.ref)
			if len(tc.err) > 0 {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				for _, want := range tc.err {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Revision != tc.revision {
				t.Errorf("revision %q, want %q", got.Revision, tc.revision)
			}
			switch tc.dir {
			case "root":
				if got.Root != root {
					t.Errorf("dir %s, want the checkout %s", got.Root, root)
				}
			case "mapped":
				if got.Root != mappedDir {
					t.Errorf("dir %s, want the mapped %s", got.Root, mappedDir)
				}
			case "fetched":
				// The tree a unit of the same GitRepository builds from:
				// one fetch.
				u := &config.Unit{Ref: config.Ref{Namespace: "apps", Name: "web"}, Source: config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "charts"}}
				calls := srv.Calls("charts")
				src, err := r.Resolve(t.Context(), u)
				if err != nil || src.Root != got.Root || srv.Calls("charts") != calls {
					t.Errorf("the unit's tree %s (%v, %d requests after %d), the chart's %s: want one fetch, one tree", src.Root, err, srv.Calls("charts"), calls, got.Root)
				}
			}
		})
	}
}
