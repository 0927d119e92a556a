package units

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// A GitRepository is this repository when its URL names the checkout's
// remote or GitHub's repository, whatever the form of either.
func TestIdentityMatchesURLs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   Identity
		url  string
		want bool
	}{
		{Identity{Remote: "https://github.com/acme/fleet"}, "ssh://git@github.com/acme/fleet", true},
		{Identity{Remote: "https://github.com/acme/fleet.git"}, "https://github.com/acme/fleet", true},
		{Identity{Remote: "git@github.com:acme/fleet.git"}, "https://github.com/acme/fleet/", true},
		{Identity{Remote: "https://x-access-token:s3cret@GitHub.com/Acme/Fleet"}, "ssh://git@github.com:22/acme/fleet.git", true},
		{Identity{Remote: "ssh://git@gitlab.example:2222/team/infra/fleet.git"}, "https://gitlab.example/team/infra/fleet", true},
		{Identity{Remote: "/srv/git/fleet.git"}, "file:///srv/git/fleet.git", true},
		{Identity{Remote: "/srv/git/fleet"}, "file:///srv/git/fleet.git", true},
		{Identity{GitHubRepository: "acme/fleet"}, "ssh://git@github.com/acme/fleet", true},
		{Identity{GitHubRepository: "acme/fleet", GitHubServer: "https://ghe.example/"}, "git@ghe.example:acme/fleet.git", true},
		{Identity{Remote: "https://github.com/me/fork", GitHubRepository: "acme/fleet"}, "https://github.com/acme/fleet", true},

		{Identity{Remote: "https://github.com/acme/fleet"}, "https://github.com/acme/fleet-infra", false},
		{Identity{Remote: "https://github.com/acme/fleet"}, "https://gitlab.com/acme/fleet", false},
		{Identity{Remote: "https://github.com/acme/fleet"}, "https://github.com/stefanprodan/gitops-istio", false},
		{Identity{GitHubRepository: "acme/fleet", GitHubServer: "https://ghe.example"}, "https://github.com/acme/fleet", false},
		{Identity{}, "https://github.com/acme/fleet", false},
		{Identity{Remote: "https://github.com/acme/fleet"}, "", false},
		{Identity{Remote: "https://github.com/acme/fleet"}, "not a url", false},
		{Identity{Remote: "https://github.com/"}, "https://github.com", false},
	} {
		if got := tc.id.Matches(tc.url); got != tc.want {
			t.Errorf("%+v matches %q: %v, want %v", tc.id, tc.url, got, tc.want)
		}
	}
}

func TestParseSource(t *testing.T) {
	t.Parallel()
	ref, dir, err := ParseSource("GitRepository/flux-system/podinfo=../podinfo")
	if err != nil || ref != (config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "podinfo"}) || dir != "../podinfo" {
		t.Errorf("got %v %q %v", ref, dir, err)
	}
	for _, bad := range []string{"GitRepository/podinfo=dir", "GitRepository/flux-system/podinfo", "GitRepository/flux-system/podinfo=", "HelmRepository/a/b=dir", "GitRepository//b=dir", "=dir"} {
		if _, _, err := ParseSource(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// What each sourceRef resolves to: this checkout, a mapped directory, or
// a failure naming the source and how to map it; never the checkout in
// another repository's stead.
func TestResolveSources(t *testing.T) {
	t.Parallel()
	root, other := t.TempDir(), t.TempDir()
	git := func(ns, name, url string) *config.Source {
		return &config.Source{Kind: "GitRepository", Ref: config.Ref{Namespace: ns, Name: name}, File: "clusters/prod/sources.yaml", Line: 7, URL: url, GitRef: "branch main"}
	}
	ref := func(kind, ns, name string) config.SourceRef {
		return config.SourceRef{Kind: kind, Namespace: ns, Name: name}
	}
	set := &config.Set{
		Sources: []*config.Source{
			git("flux-system", "flux-system", "ssh://git@github.com/acme/fleet"),
			git("flux-system", "fleet-https", "https://github.com/acme/fleet.git"),
			git("flux-system", "istio", "https://github.com/stefanprodan/gitops-istio"),
			git("team-a", "flux-system", "https://github.com/acme/team-a"),
			git("flux-system", "private", "https://deploy:ghp_t0k3n@github.com/acme/private"),
			{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: "manifests"}, URL: "oci://ghcr.io/acme/manifests"},
		},
		Units: []*config.Unit{{Ref: config.Ref{Namespace: "flux-system", Name: "flux-system"}, Sync: true, Source: ref("GitRepository", "flux-system", "flux-system")}},
	}
	acme := Identity{Remote: "https://github.com/acme/fleet"}
	fork := Identity{Remote: "https://github.com/me/fleet"}
	for _, tc := range []struct {
		name     string
		id       Identity
		mapped   map[config.SourceRef]string
		source   config.SourceRef
		checkout bool
		root     string
		err      []string
		secret   string // never in the message
	}{
		{name: "the URL is the remote's", id: acme, source: ref("GitRepository", "flux-system", "fleet-https"), checkout: true},
		{name: "the sync's source, URL matching", id: acme, source: ref("GitRepository", "flux-system", "flux-system"), checkout: true},
		{name: "the sync's source in a fork", id: fork, source: ref("GitRepository", "flux-system", "flux-system"), checkout: true},
		{name: "the sync's source, no remote", source: ref("GitRepository", "flux-system", "flux-system"), checkout: true},
		{name: "flux-system not among the objects", id: acme, source: ref("GitRepository", "apps", "flux-system"), checkout: true},
		{name: "another repository", id: acme, source: ref("GitRepository", "flux-system", "istio"),
			err: []string{"Kustomization apps/web (clusters/prod/web.yaml:3)", "GitRepository flux-system/istio (clusters/prod/sources.yaml:7) is another repository: https://github.com/stefanprodan/gitops-istio at branch main", "not this checkout (remote origin https://github.com/acme/fleet)", "--source GitRepository/flux-system/istio=DIR", "nothing is built from this checkout"}},
		{name: "another repository mapped", id: acme, source: ref("GitRepository", "flux-system", "istio"), mapped: map[config.SourceRef]string{ref("GitRepository", "flux-system", "istio"): other}, root: other},
		{name: "this repository mapped elsewhere", id: acme, source: ref("GitRepository", "flux-system", "fleet-https"), mapped: map[config.SourceRef]string{ref("GitRepository", "flux-system", "fleet-https"): other}, root: other},
		{name: "a flux-system of another repository", id: acme, source: ref("GitRepository", "team-a", "flux-system"),
			err: []string{"GitRepository team-a/flux-system (clusters/prod/sources.yaml:7) is another repository: https://github.com/acme/team-a"}},
		{name: "another repository, its URL's credentials left out", id: acme, source: ref("GitRepository", "flux-system", "private"),
			err: []string{"is another repository: https://github.com/acme/private at branch main"}, secret: "ghp_t0k3n"},
		{name: "another repository, no remote to tell", source: ref("GitRepository", "flux-system", "istio"),
			err: []string{"this checkout has no remote origin (nor GITHUB_REPOSITORY)", "--source GitRepository/flux-system/istio=DIR"}},
		{name: "not among the objects", id: acme, source: ref("GitRepository", "flux-system", "podinfo"),
			err: []string{"GitRepository flux-system/podinfo is not among the configuration's objects (clusters/prod/web.yaml)", "--source GitRepository/flux-system/podinfo=DIR"}},
		{name: "an OCIRepository", id: acme, source: ref("OCIRepository", "flux-system", "manifests"),
			err: []string{"spec.sourceRef OCIRepository/flux-system/manifests: OCIRepository flux-system/manifests (:0, oci://ghcr.io/acme/manifests) is not pulled: sources are not fetched (--fetch-sources=false", "--source OCIRepository/flux-system/manifests=DIR"}},
		{name: "an OCIRepository not among the objects", id: acme, source: ref("OCIRepository", "flux-system", "other"),
			err: []string{"OCIRepository flux-system/other is not among the configuration's objects (clusters/prod/web.yaml)"}},
		{name: "an OCIRepository mapped", id: acme, source: ref("OCIRepository", "flux-system", "manifests"), mapped: map[config.SourceRef]string{ref("OCIRepository", "flux-system", "manifests"): other}, root: other},
		{name: "a Bucket", id: acme, source: ref("Bucket", "flux-system", "b"), err: []string{"does not fetch Bucket artifacts yet"}},
		{name: "an ExternalArtifact nothing makes", id: acme, source: ref("ExternalArtifact", "flux-system", "apps"),
			err: []string{"no ArtifactGenerator among the configuration's objects makes ExternalArtifact flux-system/apps"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &resolver{set: set, root: root, identity: tc.id, mapped: tc.mapped, revision: "abc123"}
			u := &config.Unit{Ref: config.Ref{Namespace: "apps", Name: "web"}, File: "clusters/prod/web.yaml", Line: 3, Source: tc.source}
			got, err := r.resolve(t.Context(), u)
			if len(tc.err) > 0 {
				var se *SourceError
				if !errors.As(err, &se) {
					t.Fatalf("got %+v, %v; want a *SourceError", got, err)
				}
				for _, want := range tc.err {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
					t.Errorf("error %q shows %q", err, tc.secret)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.root
			if tc.checkout {
				want = root
			}
			if got.Root != want || got.Checkout != tc.checkout {
				t.Errorf("got root %s (checkout %v), want %s (checkout %v)", got.Root, got.Checkout, want, tc.checkout)
			}
			if tc.checkout && got.Revision != "abc123" {
				t.Errorf("revision %q, want the checkout's", got.Revision)
			}
			if !tc.checkout && got.Revision != "(mapped "+tc.root+")" {
				t.Errorf("revision %q of a directory that is no git checkout", got.Revision)
			}
		})
	}
}

// The sync's source taken as the checkout though its URL is not the
// remote's (a fork) says so, once.
func TestResolveNotesForkOnce(t *testing.T) {
	t.Parallel()
	ref := config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"}
	set := &config.Set{
		Sources: []*config.Source{{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "flux-system"}, File: "gotk-sync.yaml", Line: 1, URL: "https://github.com/acme/fleet"}},
		Units:   []*config.Unit{{Sync: true, Source: ref}},
	}
	r := &resolver{set: set, root: t.TempDir(), identity: Identity{Remote: "https://github.com/me/fleet"}}
	for _, name := range []string{"a", "b"} {
		if _, err := r.resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: name}, Source: ref}); err != nil {
			t.Fatal(err)
		}
	}
	if notes := r.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "is taken as this checkout") || !strings.Contains(notes[0], "a fork or a mirror") {
		t.Errorf("notes: %q", notes)
	}
}

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree reads every file under dir (path → content).
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An ArtifactGenerator's copy operations, as source-watcher documents
// them: cp-like, in order, later ones overwriting, Merge merging YAML.
func TestCopyArtifact(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	writeTree(t, repo, map[string]string{
		"infrastructure/controllers/kustomization.yaml": "resources: [a.yaml]\n",
		"infrastructure/controllers/a.yaml":             "a",
		"infrastructure/configs/b.yaml":                 "b",
		"infrastructure/configs/README.md":              "docs",
		"infrastructure/configs/testdata/t.yaml":        "t",
		"apps/base/web/web.yaml":                        "web",
		"apps/production/kustomization.yaml":            "resources: [../base/web]\n",
		"charts/web/values.yaml":                        "replicas: 1\nimage: {tag: \"1.0\", pullPolicy: IfNotPresent}\nports: [80, 443]\n",
		"values-prod.yaml":                              "replicas: 3\nimage: {tag: \"2.0\"}\nports: [8080]\n",
		".git/HEAD":                                     "ref: refs/heads/main",
	})
	copyOp := func(from, to string, exclude ...string) config.Copy {
		return config.Copy{From: from, To: to, Exclude: exclude, Strategy: config.StrategyOverwrite}
	}
	for _, tc := range []struct {
		name string
		ops  []config.Copy
		want map[string]string
		err  string
	}{
		{name: "a directory's contents (the canonical example)", ops: []config.Copy{copyOp("@repo/infrastructure/**", "@artifact/")},
			want: map[string]string{"controllers/kustomization.yaml": "resources: [a.yaml]\n", "controllers/a.yaml": "a", "configs/b.yaml": "b", "configs/README.md": "docs", "configs/testdata/t.yaml": "t"}},
		{name: "two directories side by side", ops: []config.Copy{copyOp("@repo/apps/base/**", "@artifact/base/"), copyOp("@repo/apps/production/**", "@artifact/production/")},
			want: map[string]string{"base/web/web.yaml": "web", "production/kustomization.yaml": "resources: [../base/web]\n"}},
		{name: "a directory itself", ops: []config.Copy{copyOp("@repo/apps/base/", "@artifact/apps/")},
			want: map[string]string{"apps/base/web/web.yaml": "web"}},
		{name: "files of a glob", ops: []config.Copy{copyOp("@repo/infrastructure/configs/*.yaml", "@artifact/cfg/")},
			want: map[string]string{"cfg/infrastructure/configs/b.yaml": "b"}},
		{name: "a file to a name", ops: []config.Copy{copyOp("@repo/apps/base/web/web.yaml", "@artifact/app.yaml")},
			want: map[string]string{"app.yaml": "web"}},
		{name: "a file into a directory", ops: []config.Copy{copyOp("@repo/apps/base/web/web.yaml", "@artifact/apps/")},
			want: map[string]string{"apps/web.yaml": "web"}},
		{name: "excludes: a name at any depth, a path under the selection", ops: []config.Copy{copyOp("@repo/infrastructure/**", "@artifact/", "*.md", "configs/testdata/**")},
			want: map[string]string{"controllers/kustomization.yaml": "resources: [a.yaml]\n", "controllers/a.yaml": "a", "configs/b.yaml": "b"}},
		{name: "the whole source, without .git", ops: []config.Copy{copyOp("@repo/", "@artifact/"), copyOp("@repo/values-prod.yaml", "@artifact/v.yaml")},
			want: map[string]string{"infrastructure/controllers/kustomization.yaml": "resources: [a.yaml]\n", "infrastructure/controllers/a.yaml": "a", "infrastructure/configs/b.yaml": "b", "infrastructure/configs/README.md": "docs", "infrastructure/configs/testdata/t.yaml": "t", "apps/base/web/web.yaml": "web", "apps/production/kustomization.yaml": "resources: [../base/web]\n", "charts/web/values.yaml": "replicas: 1\nimage: {tag: \"1.0\", pullPolicy: IfNotPresent}\nports: [80, 443]\n", "values-prod.yaml": "replicas: 3\nimage: {tag: \"2.0\"}\nports: [8080]\n", "v.yaml": "replicas: 3\nimage: {tag: \"2.0\"}\nports: [8080]\n"}},
		{name: "later operations overwrite", ops: []config.Copy{copyOp("@repo/apps/base/web/web.yaml", "@artifact/x.yaml"), copyOp("@repo/infrastructure/configs/b.yaml", "@artifact/x.yaml")},
			want: map[string]string{"x.yaml": "b"}},
		{name: "merge: maps merged, lists replaced", ops: []config.Copy{copyOp("@repo/charts/**", "@artifact/"), {From: "@repo/values-prod.yaml", To: "@artifact/web/values.yaml", Strategy: config.StrategyMerge}},
			want: map[string]string{"web/values.yaml": "image:\n  pullPolicy: IfNotPresent\n  tag: \"2.0\"\nports:\n- 8080\nreplicas: 3\n"}},
		{name: "nothing matches", ops: []config.Copy{copyOp("@repo/nowhere/**", "@artifact/")}, err: `no files match pattern "nowhere/**"`},
		{name: "a path that is not there", ops: []config.Copy{copyOp("@repo/nowhere", "@artifact/")}, err: `source "nowhere" does not exist`},
		{name: "everything excluded", ops: []config.Copy{copyOp("@repo/infrastructure/configs/*.md", "@artifact/", "*.md")}, err: "were excluded"},
		{name: "an unknown alias", ops: []config.Copy{copyOp("@other/x", "@artifact/")}, err: `source alias "other" not found`},
		{name: "out of the source", ops: []config.Copy{copyOp("@repo/../../etc/passwd", "@artifact/")}, err: "../../etc/passwd: invalid argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := t.TempDir()
			err := copyArtifact(t.Context(), tc.ops, map[string]string{"repo": repo}, dest)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, readTree(t, dest)); diff != "" {
				t.Errorf("artifact (-want +got):\n%s", diff)
			}
		})
	}
}

// A Kustomization of an ExternalArtifact builds its path inside the
// artifact its generator makes from this checkout, once for every unit
// of it, with the checkout's revision; Close removes the artifacts.
func TestResolveArtifact(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{"infrastructure/controllers/a.yaml": "a", "infrastructure/configs/b.yaml": "b"})
	gitRef := config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"}
	set := &config.Set{Generators: []*config.Generator{{
		Ref: config.Ref{Namespace: "flux-system", Name: "flux-system"}, File: "clusters/prod/artifacts.yaml", Line: 2,
		Sources: []config.GeneratorSource{{Alias: "monorepo", Source: gitRef}},
		Artifacts: []config.Artifact{
			{Name: "infrastructure", OriginRevision: "@monorepo", Copy: []config.Copy{{From: "@monorepo/infrastructure/**", To: "@artifact/", Strategy: "Overwrite"}}},
			{Name: "broken", Copy: []config.Copy{{From: "@monorepo/nowhere/**", To: "@artifact/", Strategy: "Overwrite"}}},
		},
	}}}
	r := &resolver{set: set, root: root, revision: "abc123"}
	art := config.SourceRef{Kind: "ExternalArtifact", Namespace: "flux-system", Name: "infrastructure"}
	var roots []string
	for _, name := range []string{"infra-controllers", "infra-configs"} {
		got, err := r.resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: name}, Source: art})
		if err != nil {
			t.Fatal(err)
		}
		if got.Checkout || got.Revision != "abc123" {
			t.Errorf("%s: %+v, want the artifact with the checkout's revision (originRevision)", name, got)
		}
		roots = append(roots, got.Root)
	}
	if roots[0] != roots[1] {
		t.Errorf("the artifact was made twice: %q", roots)
	}
	if diff := cmp.Diff(map[string]string{"controllers/a.yaml": "a", "configs/b.yaml": "b"}, readTree(t, roots[0])); diff != "" {
		t.Errorf("artifact (-want +got):\n%s", diff)
	}
	_, err := r.resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: "x"}, File: "x.yaml", Line: 1,
		Source: config.SourceRef{Kind: "ExternalArtifact", Namespace: "flux-system", Name: "broken"}})
	if err == nil || !strings.Contains(err.Error(), "ArtifactGenerator flux-system/flux-system (clusters/prod/artifacts.yaml:2), artifact broken") {
		t.Errorf("a copy that fails: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(roots[0]); !os.IsNotExist(err) {
		t.Errorf("the artifact is still there after Close: %v", err)
	}
}

// A unit whose source cannot be resolved is mapped (so it fails when run,
// nothing built), not a problem of the whole configuration.
func TestUnitOfAnUnresolvedSourceFailsAlone(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{"istio/cm.yaml": "x"})
	set := &config.Set{
		Units: []*config.Unit{{Name: "istio", Ref: config.Ref{Namespace: "flux-system", Name: "istio"}, File: "istio.yaml", Line: 1, Path: "istio",
			Source: config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "istio"}}},
		Sources: []*config.Source{{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "istio"}, URL: "https://github.com/stefanprodan/gitops-istio"}},
	}
	c := Config{Set: set, Root: root, Identity: Identity{Remote: "https://github.com/acme/fleet"},
		Cluster: Clusters(func(string) (*kube.Clients, error) { return nil, nil })}
	list, err := c.Units(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("units %v, error %v", list, err)
	}
	if list[0].Err == nil || list[0].Options.Dir.Path != "" {
		t.Errorf("unit %+v: want an error and no directory to build", list[0])
	}
	res := unbuildable(list[0], "apply")
	if res.Reason != "ArtifactFailed" || !res.Failed() || !slices.Contains(strings.Fields(res.Message), "--source") {
		t.Errorf("result: %+v", res)
	}
	if err := CheckPaths(root, set); err != nil {
		t.Errorf("CheckPaths checked the path of another repository's unit: %v", err)
	}
}
