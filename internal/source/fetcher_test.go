package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gitsource"
)

// A GitRepository that is another repository, not mapped, is fetched at
// its spec.ref (once, however many units name it) and built from there,
// with the fetched revision; what cannot be fetched fails naming the
// GitRepository, its URL and ref, and the flag that gives credentials.
func TestResolveFetchesGitRepositories(t *testing.T) {
	t.Parallel()
	srv := gittest.NewServer(t)
	public := srv.Repo("public")
	public.Commit("one", map[string]string{"apps/web/cm.yaml": "kind: ConfigMap\n"})
	public.Tag("v1.0.0", true)
	head := public.Commit("two", map[string]string{"apps/web/cm.yaml": "kind: ConfigMap # two\n"})
	private := srv.Repo("private")
	privHead := private.Commit("one", map[string]string{"apps/web/cm.yaml": "kind: ConfigMap\n"})
	srv.RequireAuth("private", "git", "tok-right-0001")

	git := func(name, url string, spec config.GitSpec) *config.Source {
		return &config.Source{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: name}, File: "clusters/prod/sources.yaml", Line: 7, URL: url, Git: &spec}
	}
	ref := func(name string) config.SourceRef {
		return config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: name}
	}
	set := &config.Set{Sources: []*config.Source{
		git("public", public.URL, config.GitSpec{}),
		git("public-tag", public.URL, config.GitSpec{Tag: "v1.0.0"}),
		git("private", private.URL, config.GitSpec{SecretName: "private-auth"}),
		git("private-wrong", private.URL, config.GitSpec{SecretName: "wrong-auth"}),
		git("private-unmapped", private.URL, config.GitSpec{SecretName: "unmapped"}),
		git("private-configured", private.URL, config.GitSpec{SecretName: "in-the-configuration"}),
		git("private-badsecret", private.URL, config.GitSpec{SecretName: "bad-keys"}),
		git("private-nosecret", private.URL, config.GitSpec{}),
		git("submodules", public.URL, config.GitSpec{Unsupported: []string{"spec.recurseSubmodules", "spec.include"}}),
		git("nobranch", public.URL, config.GitSpec{Branch: "nope"}),
		git("fleet", "https://github.com/acme/fleet", config.GitSpec{}),
	}}
	secrets := map[string]gitsource.Auth{
		"private-auth": {Username: "git", Password: "tok-right-0001"},
		"wrong-auth":   {Username: "git", Password: "tok-wrong-0002"},
	}
	other := t.TempDir()
	for _, tc := range []struct {
		name     string
		source   string
		mapped   bool
		revision string
		content  string
		err      []string
	}{
		{name: "default branch", source: "public", revision: "master@sha1:" + head, content: "# two"},
		{name: "a tag", source: "public-tag", revision: "v1.0.0@sha1:", content: "kind: ConfigMap\n"},
		{name: "with its Secret", source: "private", revision: "master@sha1:" + privHead},
		{name: "mapped wins", source: "public", mapped: true},
		{name: "this repository is the checkout", source: "fleet"},
		{name: "wrong credentials", source: "private-wrong", err: []string{
			"GitRepository flux-system/private-wrong (clusters/prod/sources.yaml:7, " + private.URL + " at branch master (no spec.ref))",
			"the credentials given for spec.secretRef were refused", "give the credentials of Secret wrong-auth:"}},
		{name: "no credentials", source: "private-nosecret", err: []string{"no credentials were given", "name a Secret in spec.secretRef and give its credentials"}},
		{name: "Secret not given", source: "private-unmapped", err: []string{"spec.secretRef names Secret unmapped, which is neither in the configuration's files nor in the cluster: give its credentials"}},
		{name: "its Secret from the configuration or the cluster", source: "private-configured", revision: "master@sha1:" + privHead},
		{name: "a Secret of keys a GitRepository does not read", source: "private-badsecret", err: []string{
			"spec.secretRef: Secret flux-system/bad-keys: keys token are not read"}},
		{name: "fields not honoured", source: "submodules", err: []string{"sets spec.recurseSubmodules, spec.include, which kustomize-deploy does not honour"}},
		{name: "no such branch", source: "nobranch", err: []string{"at branch nope)", "branch nope is not in the repository"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One credential model: a Secret given by name, else read where
			// Secrets are (the configuration's files, the cluster).
			var masked []string
			lookup := func(_ context.Context, namespace, name string) (map[string]string, bool, error) {
				switch {
				case namespace == "flux-system" && name == "in-the-configuration":
					return map[string]string{"username": "git", "password": "tok-right-0001"}, true, nil
				case namespace == "flux-system" && name == "bad-keys":
					return map[string]string{"token": "tok-bad-0003"}, true, nil
				}
				return nil, false, nil
			}
			r := &Resolver{set: set, root: t.TempDir(), identity: Identity{Remote: "https://github.com/acme/fleet"}, revision: "abc123",
				fetcher: &fetcher{secrets: secrets, lookup: lookup, mask: func(s []string) { masked = append(masked, s...) }}}
			defer func() {
				if tc.source == "private-configured" && !slices.Contains(masked, "tok-right-0001") {
					t.Errorf("the password read from the Secret is not masked: %q", masked)
				}
			}()
			if tc.mapped {
				r.mapped = map[config.SourceRef]string{ref(tc.source): other}
			}
			u := &config.Unit{Ref: config.Ref{Namespace: "apps", Name: "web"}, File: "clusters/prod/web.yaml", Line: 3, Source: ref(tc.source)}
			got, err := r.Resolve(t.Context(), u)
			if len(tc.err) > 0 {
				var se *Error
				if !errors.As(err, &se) {
					t.Fatalf("got %+v, %v; want a *Error", got, err)
				}
				for _, want := range tc.err {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if strings.Contains(err.Error(), "tok-") {
					t.Errorf("error %q shows a token", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.mapped:
				if got.Root != other {
					t.Errorf("root %s, want the mapped %s", got.Root, other)
				}
				return
			case tc.source == "fleet":
				if !got.Checkout {
					t.Errorf("got %+v, want the checkout", got)
				}
				return
			}
			if got.Checkout || !strings.HasPrefix(got.Revision, tc.revision) || got.RevisionTime.IsZero() {
				t.Errorf("got %+v, want revision %s", got, tc.revision)
			}
			data, err := os.ReadFile(filepath.Join(got.Root, "apps", "web", "cm.yaml"))
			if err != nil || !strings.Contains(string(data), tc.content) {
				t.Errorf("apps/web/cm.yaml = %q, %v; want %q", data, err, tc.content)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(got.Root); !os.IsNotExist(err) {
				t.Errorf("Close left %s (%v)", got.Root, err)
			}
		})
	}
}

// Two units of one GitRepository: one fetch.
func TestResolveFetchesOnce(t *testing.T) {
	t.Parallel()
	srv := gittest.NewServer(t)
	repo := srv.Repo("r")
	repo.Commit("one", map[string]string{"a/x.yaml": "a: 1\n", "b/x.yaml": "b: 1\n"})
	set := &config.Set{Sources: []*config.Source{{Kind: "GitRepository", Ref: config.Ref{Namespace: "ns", Name: "r"}, URL: repo.URL}}}
	r := &Resolver{set: set, root: t.TempDir(), fetcher: &fetcher{}}
	defer r.Close()
	var roots []string
	for _, name := range []string{"a", "b"} {
		u := &config.Unit{Ref: config.Ref{Namespace: "ns", Name: name}, Source: config.SourceRef{Kind: "GitRepository", Namespace: "ns", Name: "r"}}
		got, err := r.Resolve(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, got.Root)
		if name == "a" && srv.Calls("r") == 0 {
			t.Fatal("no request reached the server")
		}
	}
	calls := srv.Calls("r")
	if roots[0] != roots[1] {
		t.Errorf("roots %v: one fetch, one tree", roots)
	}
	u := &config.Unit{Ref: config.Ref{Namespace: "ns", Name: "c"}, Source: config.SourceRef{Kind: "GitRepository", Namespace: "ns", Name: "r"}}
	if _, err := r.Resolve(t.Context(), u); err != nil || srv.Calls("r") != calls {
		t.Errorf("a third unit: %v, %d requests after %d: fetched again", err, srv.Calls("r"), calls)
	}
	if notes := strings.Join(r.Notes(), "\n"); strings.Count(notes, "fetched from") != 1 {
		t.Errorf("notes %q: want one note of the fetch", notes)
	}
}

// An ArtifactGenerator's GitRepository source of another repository is
// fetched, its copy operations performed from that tree, and the
// artifact's revision is the fetched one; a source that cannot be
// fetched fails naming the generator and the source's alias.
func TestResolveArtifactOfFetchedSource(t *testing.T) {
	t.Parallel()
	srv := gittest.NewServer(t)
	repo := srv.Repo("apps")
	head := repo.Commit("one", map[string]string{"apps/base/a.yaml": "a: 1\n", "apps/prod/b.yaml": "b: 1\n"})
	srv.RequireAuth("locked", "git", "tok-locked-0003")
	srv.Repo("locked").Commit("one", map[string]string{"x.yaml": "x: 1\n"})
	src := func(name string) config.SourceRef {
		return config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: name}
	}
	set := &config.Set{
		Sources: []*config.Source{
			{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "apps"}, File: "s.yaml", Line: 1, URL: repo.URL, Git: &config.GitSpec{}},
			{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "locked"}, File: "s.yaml", Line: 9, URL: srv.URL + "/locked", Git: &config.GitSpec{}},
		},
		Generators: []*config.Generator{{
			Ref: config.Ref{Namespace: "flux-system", Name: "gen"}, File: "clusters/prod/artifacts.yaml", Line: 2,
			Sources: []config.GeneratorSource{{Alias: "apps", Source: src("apps")}, {Alias: "locked", Source: src("locked")}},
			Artifacts: []config.Artifact{
				{Name: "apps", Revision: "@apps", Copy: []config.Copy{{From: "@apps/apps/**", To: "@artifact/", Strategy: "Overwrite"}}},
			},
		}},
	}
	r := &Resolver{set: set, root: t.TempDir(), fetcher: &fetcher{}}
	defer r.Close()
	art := config.SourceRef{Kind: "ExternalArtifact", Namespace: "flux-system", Name: "apps"}
	_, err := r.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: "apps"}, File: "u.yaml", Line: 1, Source: art})
	if err == nil || !strings.Contains(err.Error(), "ArtifactGenerator flux-system/gen (clusters/prod/artifacts.yaml:2), source locked: fetching GitRepository flux-system/locked") {
		t.Fatalf("a source that cannot be fetched: %v", err)
	}

	set.Generators[0].Sources = set.Generators[0].Sources[:1]
	r2 := &Resolver{set: set, root: t.TempDir(), fetcher: &fetcher{}}
	defer r2.Close()
	got, err := r2.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: "apps"}, File: "u.yaml", Line: 1, Source: art})
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != "master@sha1:"+head {
		t.Errorf("revision %q, want the fetched source's", got.Revision)
	}
	for _, f := range []string{"base/a.yaml", "prod/b.yaml"} {
		if _, err := os.Stat(filepath.Join(got.Root, f)); err != nil {
			t.Errorf("the artifact: %v", err)
		}
	}
}

// The sources a configuration names are fetched all at once, within one
// deadline: three Git servers that answer only once all three were
// asked (as three that never answer cost one deadline, not three) answer
// every fetch; fetched one at a time, the first would wait out the
// deadline.
func TestPrefetchFetchesInParallel(t *testing.T) {
	t.Parallel()
	const n = 3
	var mu sync.Mutex
	waiting := map[string]bool{}
	all := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		repo, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		mu.Lock()
		if !waiting[repo] {
			waiting[repo] = true
			if len(waiting) == n {
				close(all)
			}
		}
		mu.Unlock()
		select {
		case <-all:
			http.Error(w, "all three asked", http.StatusServiceUnavailable)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	set := &config.Set{}
	for i := range n {
		name := fmt.Sprintf("r%d", i)
		set.Sources = append(set.Sources, &config.Source{Kind: "GitRepository", Ref: config.Ref{Namespace: "ns", Name: name}, URL: srv.URL + "/" + name})
		set.Units = append(set.Units, &config.Unit{Ref: config.Ref{Namespace: "ns", Name: name}, Source: config.SourceRef{Kind: "GitRepository", Namespace: "ns", Name: name}})
	}
	r := &Resolver{set: set, root: t.TempDir(), fetcher: &fetcher{timeout: 30 * time.Second}}
	defer r.Close()
	r.Prefetch(t.Context())
	for _, u := range set.Units {
		_, err := r.Resolve(t.Context(), u)
		if err == nil || !strings.Contains(err.Error(), "503") || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want the servers' answer", u.Name, err)
		}
	}
}
