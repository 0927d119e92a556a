package source

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testfs"
)

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
			err: []string{"GitRepository flux-system/istio (clusters/prod/sources.yaml:7) is another repository: https://github.com/stefanprodan/gitops-istio at branch main", "not this checkout (remote origin https://github.com/acme/fleet)"}},
		{name: "another repository mapped", id: acme, source: ref("GitRepository", "flux-system", "istio"), mapped: map[config.SourceRef]string{ref("GitRepository", "flux-system", "istio"): other}, root: other},
		{name: "this repository mapped elsewhere", id: acme, source: ref("GitRepository", "flux-system", "fleet-https"), mapped: map[config.SourceRef]string{ref("GitRepository", "flux-system", "fleet-https"): other}, root: other},
		{name: "a flux-system of another repository", id: acme, source: ref("GitRepository", "team-a", "flux-system"),
			err: []string{"GitRepository team-a/flux-system (clusters/prod/sources.yaml:7) is another repository: https://github.com/acme/team-a"}},
		{name: "another repository, its URL's credentials left out", id: acme, source: ref("GitRepository", "flux-system", "private"),
			err: []string{"is another repository: https://deploy:xxxxx@github.com/acme/private at branch main"}, secret: "ghp_t0k3n"},
		{name: "another repository, no remote to tell", source: ref("GitRepository", "flux-system", "istio"),
			err: []string{"this checkout has no remote origin (nor GITHUB_REPOSITORY)"}},
		{name: "not among the objects", id: acme, source: ref("GitRepository", "flux-system", "podinfo"),
			err: []string{"GitRepository flux-system/podinfo is not among the configuration's objects (clusters/prod/web.yaml)"}},
		{name: "an OCIRepository", id: acme, source: ref("OCIRepository", "flux-system", "manifests"),
			err: []string{"OCIRepository flux-system/manifests (:0, oci://ghcr.io/acme/manifests) is not pulled: fetching sources is off"}},
		{name: "an OCIRepository not among the objects", id: acme, source: ref("OCIRepository", "flux-system", "other"),
			err: []string{"OCIRepository flux-system/other is not among the configuration's objects (clusters/prod/web.yaml)"}},
		{name: "an OCIRepository mapped", id: acme, source: ref("OCIRepository", "flux-system", "manifests"), mapped: map[config.SourceRef]string{ref("OCIRepository", "flux-system", "manifests"): other}, root: other},
		{name: "a Bucket", id: acme, source: ref("Bucket", "flux-system", "b"), err: []string{"Bucket flux-system/b is not among the configuration's objects"}},
		{name: "an ExternalArtifact nothing makes", id: acme, source: ref("ExternalArtifact", "flux-system", "apps"),
			err: []string{"no ArtifactGenerator among the configuration's objects makes ExternalArtifact flux-system/apps"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Resolver{set: set, root: root, identity: tc.id, mapped: tc.mapped, revision: "abc123"}
			u := &config.Unit{Ref: config.Ref{Namespace: "apps", Name: "web"}, File: "clusters/prod/web.yaml", Line: 3, Source: tc.source}
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
	r := &Resolver{set: set, root: t.TempDir(), identity: Identity{Remote: "https://github.com/me/fleet"}}
	for _, name := range []string{"a", "b"} {
		if _, err := r.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: name}, Source: ref}); err != nil {
			t.Fatal(err)
		}
	}
	if notes := r.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "is taken as this checkout") || !strings.Contains(notes[0], "a fork or a mirror") {
		t.Errorf("notes: %q", notes)
	}
}

// An ArtifactGenerator's copy operations, as source-watcher documents
// them: cp-like, in order, later ones overwriting, Merge merging YAML.
func TestCopyArtifact(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	testfs.Write(t, repo, map[string]string{
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
			if diff := cmp.Diff(tc.want, testfs.Read(t, dest)); diff != "" {
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
	testfs.Write(t, root, map[string]string{"infrastructure/controllers/a.yaml": "a", "infrastructure/configs/b.yaml": "b"})
	gitRef := config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"}
	set := &config.Set{Generators: []*config.Generator{{
		Ref: config.Ref{Namespace: "flux-system", Name: "flux-system"}, File: "clusters/prod/artifacts.yaml", Line: 2,
		Sources: []config.GeneratorSource{{Alias: "monorepo", Source: gitRef}},
		Artifacts: []config.Artifact{
			{Name: "infrastructure", OriginRevision: "@monorepo", Copy: []config.Copy{{From: "@monorepo/infrastructure/**", To: "@artifact/", Strategy: "Overwrite"}}},
			{Name: "broken", Copy: []config.Copy{{From: "@monorepo/nowhere/**", To: "@artifact/", Strategy: "Overwrite"}}},
		},
	}}}
	r := &Resolver{set: set, root: root, revision: "abc123"}
	art := config.SourceRef{Kind: "ExternalArtifact", Namespace: "flux-system", Name: "infrastructure"}
	var roots []string
	for _, name := range []string{"infra-controllers", "infra-configs"} {
		got, err := r.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: name}, Source: art})
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
	if diff := cmp.Diff(map[string]string{"controllers/a.yaml": "a", "configs/b.yaml": "b"}, testfs.Read(t, roots[0])); diff != "" {
		t.Errorf("artifact (-want +got):\n%s", diff)
	}
	_, err := r.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: "x"}, File: "x.yaml", Line: 1,
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

// Each failure names the Fix that gets past it (a front end says how, in
// its own words); no message names a flag or an input.
func TestErrorsNameTheirFix(t *testing.T) {
	t.Parallel()
	set := &config.Set{Sources: []*config.Source{
		{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "private"}, URL: "https://github.com/other/private", Git: &config.GitSpec{SecretName: "git-auth"}},
		{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: "art"}, URL: "oci://ghcr.io/other/art", OCI: &config.OCISpec{SecretName: "regcred"}},
	}}
	unit := func(kind, name string) *config.Unit {
		return &config.Unit{Ref: config.Ref{Namespace: "apps", Name: "web"}, Source: config.SourceRef{Kind: kind, Namespace: "flux-system", Name: name}}
	}
	fetching := func() *Resolver { return NewResolver(Options{Set: set, Root: t.TempDir(), Fetch: true}) }
	off := func() *Resolver { return NewResolver(Options{Set: set, Root: t.TempDir()}) }
	for _, tc := range []struct {
		name string
		err  func() error
		want Fix
	}{
		{"an OCIRepository, fetching off", func() error { _, err := off().Resolve(t.Context(), unit("OCIRepository", "art")); return err }, FixFetchSources},
		{"a GitRepository's Secret not given", func() error { _, err := fetching().Resolve(t.Context(), unit("GitRepository", "private")); return err }, FixGitSecret},
		{"an OCIRepository's Secret not given", func() error { _, err := fetching().Resolve(t.Context(), unit("OCIRepository", "art")); return err }, FixOCISecret},
		{"a chart's GitRepository, fetching off", func() error {
			_, err := off().ChartTree(t.Context(), config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "private"})
			return err
		}, FixFetchSources},
		{"a chart's GitRepository not in the configuration", func() error {
			_, err := off().ChartTree(t.Context(), config.SourceRef{Kind: "GitRepository", Namespace: "apps", Name: "nope"})
			return err
		}, FixMapSource},
	} {
		err := tc.err()
		if got := FixOf(err); got != tc.want {
			t.Errorf("%s: fix %q, want %q (%v)", tc.name, got, tc.want, err)
		}
		if err != nil && strings.Contains(err.Error(), "--") {
			t.Errorf("%s: %v names a flag", tc.name, err)
		}
	}
}

// An ArtifactGenerator's Extract strategy unpacks a source's tarball (a
// chart archive) into the artifact, as a HelmRelease's chartRef to the
// ExternalArtifact then loads it (ChartArtifact); a tarball climbing out
// of the artifact, or a file that is not one, fails naming it.
func TestResolveArtifactExtract(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	chart := ocitest.TarGz(t, ocitest.Files(map[string]string{"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n", "web/values.yaml": "greeting: hi\n"}))
	evil := ocitest.TarGz(t, []ocitest.Entry{{Name: "../../escaped.yaml", Body: "x"}})
	testfs.Write(t, root, map[string]string{"charts/web-1.0.0.tgz": string(chart), "charts/evil.tgz": string(evil), "charts/readme.md": "x"})
	gitRef := config.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system"}
	extract := func(from string) []config.Copy {
		return []config.Copy{{From: from, To: "@artifact/", Strategy: config.StrategyExtract}}
	}
	set := &config.Set{Generators: []*config.Generator{{
		Ref: config.Ref{Namespace: "flux-system", Name: "charts"}, File: "clusters/prod/artifacts.yaml", Line: 2,
		Sources: []config.GeneratorSource{{Alias: "repo", Source: gitRef}},
		Artifacts: []config.Artifact{
			{Name: "web", Copy: extract("@repo/charts/web-*.tgz")},
			{Name: "evil", Copy: extract("@repo/charts/evil.tgz")},
			{Name: "not-a-tarball", Copy: extract("@repo/charts/readme.md")},
		},
	}}}
	r := NewResolver(Options{Set: set, Root: root, Revision: "abc123"})
	defer r.Close()
	art := func(name string) config.SourceRef {
		return config.SourceRef{Kind: "ExternalArtifact", Namespace: "flux-system", Name: name}
	}
	got, err := r.ChartArtifact(t.Context(), art("web"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n", "web/values.yaml": "greeting: hi\n"}, testfs.Read(t, got.Root)); diff != "" {
		t.Errorf("artifact (-want +got):\n%s", diff)
	}
	for name, want := range map[string]string{"evil": "a path climbing out of the artifact (..) is refused", "not-a-tarball": "charts/readme.md is not a tarball"} {
		if _, err := r.ChartArtifact(t.Context(), art(name)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}
