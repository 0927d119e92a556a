package resourceset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// fakeGitHub is a repository's pull requests, branches and tags.
type fakeGitHub struct {
	web      string
	pulls    []github.Pull
	branches []github.Ref
	tags     []github.Ref
	calls    int
	repos    []string
}

func (f *fakeGitHub) WebURL() string { return f.web }
func (f *fakeGitHub) OpenPulls(_ context.Context, owner, repo string, visit func(github.Pull) bool) error {
	f.calls++
	f.repos = append(f.repos, owner+"/"+repo)
	for _, p := range f.pulls {
		if !visit(p) {
			break
		}
	}
	return nil
}
func (f *fakeGitHub) Branches(_ context.Context, owner, repo string, visit func(github.Ref) bool) error {
	f.calls++
	for _, b := range f.branches {
		if !visit(b) {
			break
		}
	}
	return nil
}
func (f *fakeGitHub) Tags(_ context.Context, owner, repo string, visit func(github.Ref) bool) error {
	f.calls++
	for _, b := range f.tags {
		if !visit(b) {
			break
		}
	}
	return nil
}

const file = "apps/rset.yaml"

// expandYAML expands the objects of a YAML stream read from file.
func expandYAML(t *testing.T, text string, opts Options) (*Expansion, error) {
	t.Helper()
	objs, err := ssautil.ReadObjects(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return Expand(t.Context(), objs, func(object.ID) Origin { return Origin{File: file, Data: []byte(text)} }, opts)
}

// names are "Kind/namespace/name" of objs.
func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, u := range objs {
		out[i] = object.IDOf(u).String()
	}
	return out
}

const inline = `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: tenants
  namespace: flux-system
spec:
  commonMetadata:
    labels:
      team: platform
  inputs:
    - tenant: team1
      replicas: 2
    - tenant: team2
      replicas: 3
  resources:
    - apiVersion: v1
      kind: Namespace
      metadata:
        name: << inputs.tenant >>
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: settings
        namespace: << inputs.tenant >>
      data:
        replicas: << inputs.replicas | quote >>
        from: << inputs.provider.kind >>/<< inputs.provider.name >>
`

// Inline inputs: every resource once per input set, owner labels and
// common metadata on each.
func TestExpandInlineInputs(t *testing.T) {
	x, err := expandYAML(t, inline, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := x.Generated()
	want := []string{"Namespace/team1", "Namespace/team2", "ConfigMap/team1/settings", "ConfigMap/team2/settings"}
	if diff := cmp.Diff(want, names(got)); diff != "" {
		t.Fatalf("generated (-want +got):\n%s", diff)
	}
	cm := got[3]
	if diff := cmp.Diff(map[string]any{"replicas": "3", "from": "ResourceSet/tenants"}, cm.Object["data"]); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{
		"team": "platform", "resourceset.fluxcd.controlplane.io/name": "tenants", "resourceset.fluxcd.controlplane.io/namespace": "flux-system",
	}, cm.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if x.External || x.Sets[0].Inputs != 2 {
		t.Errorf("External = %v, Inputs = %d; want false, 2", x.External, x.Sets[0].Inputs)
	}
}

// A Static provider exports its defaultValues with an id, the checksum
// of its name (as flux-operator build resourceset makes it).
func TestExpandStaticProvider(t *testing.T) {
	x, err := expandYAML(t, `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSetInputProvider
metadata:
  name: cluster-info
  namespace: flux-system
  labels:
    kind: static
spec:
  type: Static
  defaultValues:
    env: staging
    id: overridden
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: apps
  namespace: flux-system
spec:
  inputsFrom:
    - kind: ResourceSetInputProvider
      selector:
        matchLabels:
          kind: static
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: info-<< inputs.id >>
      namespace: flux-system
    data:
      env: << inputs.env >>
      provider: << inputs.provider.name >>
`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := x.Generated()
	id := inputID("cluster-info")
	if diff := cmp.Diff([]string{"ConfigMap/flux-system/info-" + id}, names(got)); diff != "" {
		t.Fatalf("generated (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"env": "staging", "provider": "cluster-info"}, got[0].Object["data"]); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

const pullRequests = `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSetInputProvider
metadata:
  name: previews
  namespace: flux-system
spec:
  type: GitHubPullRequest
  url: https://github.com/acme/app
  filter:
    labels: [deploy/preview]
    excludeBranch: ^renovate/
  defaultValues:
    env: preview
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: previews
  namespace: flux-system
spec:
  inputsFrom:
    - name: previews
  resourcesTemplate: |
    apiVersion: v1
    kind: Namespace
    metadata:
      name: app-preview-<< inputs.id >>
      annotations:
        sha: << inputs.sha >>
        branch: << inputs.branch >>
        env: << inputs.env >>
`

// A GitHubPullRequest provider exports the open pull requests its filter
// keeps (labels, branches), asked once per run (Cache).
func TestExpandGitHubPullRequests(t *testing.T) {
	gh := &fakeGitHub{web: "https://github.com", pulls: []github.Pull{
		{Number: 7, HeadRef: "feat/a", HeadSHA: "aaa", Labels: []string{"deploy/preview", "x"}},
		{Number: 8, HeadRef: "feat/b", HeadSHA: "bbb", Labels: []string{"x"}},
		{Number: 9, HeadRef: "renovate/dep", HeadSHA: "ccc", Labels: []string{"deploy/preview"}},
	}}
	opts := Options{GitHub: gh, Cache: &Cache{}}
	for range 2 {
		x, err := expandYAML(t, pullRequests, opts)
		if err != nil {
			t.Fatal(err)
		}
		got := x.Generated()
		if diff := cmp.Diff([]string{"Namespace/app-preview-7"}, names(got)); diff != "" {
			t.Fatalf("generated (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"sha": "aaa", "branch": "feat/a", "env": "preview"}, got[0].GetAnnotations()); diff != "" {
			t.Errorf("annotations (-want +got):\n%s", diff)
		}
		if !x.External {
			t.Error("External = false, want true")
		}
	}
	if gh.calls != 1 || gh.repos[0] != "acme/app" {
		t.Errorf("GitHub asked %d times (%v), want once for acme/app", gh.calls, gh.repos)
	}
	// The pull request closed: nothing is generated, which collects
	// what was.
	gh.pulls = nil
	x, err := expandYAML(t, pullRequests, Options{GitHub: gh})
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Generated(); len(got) != 0 || len(x.Sets) != 1 {
		t.Errorf("generated %v in %d sets, want nothing in 1", names(got), len(x.Sets))
	}
}

// Branches and tags, with the operator's filters.
func TestListGitHub(t *testing.T) {
	gh := &fakeGitHub{
		branches: []github.Ref{{Name: "main", SHA: "1"}, {Name: "feat/a", SHA: "2"}, {Name: "feat/b", SHA: "3"}, {Name: "feat/c", SHA: "4"}},
		tags:     []github.Ref{{Name: "v1.0.0", SHA: "a"}, {Name: "v1.2.0", SHA: "b"}, {Name: "latest", SHA: "c"}, {Name: "v2.0.0", SHA: "d"}, {Name: "v1.10.0", SHA: "e"}},
		pulls: []github.Pull{
			{Number: 1, HeadRef: "a", Labels: []string{"p", "q"}}, {Number: 2, HeadRef: "b", Labels: []string{"p"}},
			{Number: 3, HeadRef: "c", Labels: []string{"q", "p"}}, {Number: 4, HeadRef: "d"},
		},
	}
	ids := func(sets []map[string]any, key string) []string {
		var out []string
		for _, s := range sets {
			out = append(out, s[key].(string))
		}
		return out
	}
	for _, tc := range []struct {
		name, typ, key string
		filter         *filterSpec
		want           []string
	}{
		{"branches included", TypeGitHubBranch, "branch", &filterSpec{IncludeBranch: "^feat/"}, []string{"feat/a", "feat/b", "feat/c"}},
		{"branches excluded and limited", TypeGitHubBranch, "branch", &filterSpec{ExcludeBranch: "^main$", Limit: 2}, []string{"feat/a", "feat/b"}},
		{"tags reverse lexical", TypeGitHubTag, "tag", nil, []string{"v2.0.0", "v1.2.0", "v1.10.0", "v1.0.0", "latest"}},
		{"tags by semver", TypeGitHubTag, "tag", &filterSpec{Semver: ">=1.0.0 <2.0.0"}, []string{"v1.10.0", "v1.2.0", "v1.0.0"}},
		{"tags by semver limited", TypeGitHubTag, "tag", &filterSpec{Semver: "*", Limit: 1}, []string{"v2.0.0"}},
		{"tags included", TypeGitHubTag, "tag", &filterSpec{IncludeTag: `^v1\.`, ExcludeTag: `10`}, []string{"v1.2.0", "v1.0.0"}},
		{"pulls with every label", TypeGitHubPullRequest, "id", &filterSpec{Labels: []string{"p", "q"}}, []string{"1", "3"}},
		{"pulls limited", TypeGitHubPullRequest, "id", &filterSpec{Limit: 3}, []string{"1", "2", "3"}},
		{"pulls by head branch", TypeGitHubPullRequest, "id", &filterSpec{IncludeBranch: "^[bd]$"}, []string{"2", "4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := newFilter(tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			sets, err := listGitHub(t.Context(), gh, tc.typ, "o", "r", f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(sets, tc.key)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewFilterErrors(t *testing.T) {
	for _, tc := range []struct {
		f    filterSpec
		want string
	}{
		{filterSpec{IncludeBranch: "("}, "spec.filter.includeBranch"},
		{filterSpec{ExcludeTag: "["}, "spec.filter.excludeTag"},
		{filterSpec{Semver: "not a range"}, "spec.filter.semver"},
		{filterSpec{Limit: 10001}, "spec.filter.limit 10001: more than 10000"},
	} {
		if _, err := newFilter(&tc.f); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error = %v, want %q", tc.f, err, tc.want)
		}
	}
}

func TestRepository(t *testing.T) {
	for _, tc := range []struct {
		url, web, owner, repo, err string
	}{
		{url: "https://github.com/acme/app", web: "https://github.com", owner: "acme", repo: "app"},
		{url: "https://GitHub.com/acme/app", web: "https://github.com", owner: "acme", repo: "app"},
		{url: "https://ghe.example/acme/app", web: "https://ghe.example", owner: "acme", repo: "app"},
		{url: "https://evil.example/acme/app", web: "https://github.com", err: "is not on https://github.com, the GitHub server this run's token is for"},
		{url: "http://github.com/acme/app", web: "https://github.com", err: "is not on"},
		{url: "https://github.com/acme", web: "https://github.com", err: "no owner and repository"},
		{url: "https://github.com/acme/app/pulls", web: "https://github.com", err: "no owner and repository"},
		{url: "oci://ghcr.io/acme/app", web: "https://github.com", err: "not an http(s) URL"},
		{url: "", web: "https://github.com", err: "spec.url: required"},
	} {
		owner, repo, err := repository(tc.url, tc.web)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error = %v, want %q", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil || owner != tc.owner || repo != tc.repo {
			t.Errorf("%q: %q, %q, %v; want %q, %q", tc.url, owner, repo, err, tc.owner, tc.repo)
		}
	}
}

// Permute: the Cartesian product of every source's input sets, each
// under its normalized name, each combination with an id of its own.
func TestCombinePermute(t *testing.T) {
	self := source{apiVersion: "fluxcd.controlplane.io/v1", kind: "ResourceSet", namespace: "ns", name: "my-rset", inputs: []map[string]any{{"id": "id1"}, {"id": "id2"}}}
	git := source{apiVersion: "fluxcd.controlplane.io/v1", kind: "ResourceSetInputProvider", namespace: "ns", name: "git-tag", inputs: []map[string]any{{"id": "t"}}}
	empty := source{apiVersion: "fluxcd.controlplane.io/v1", kind: "ResourceSetInputProvider", namespace: "ns", name: "empty"}
	got, err := combine(self, []source{git, empty}, "Permute", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d permutations, want 2", len(got))
	}
	if got[0]["id"] != inputID("my_rset=0/git_tag=0") || got[1]["id"] != inputID("my_rset=1/git_tag=0") {
		t.Errorf("ids %v, %v", got[0]["id"], got[1]["id"])
	}
	rset := got[1]["my_rset"].(map[string]any)
	if rset["id"] != "id2" || rset["provider"].(map[string]any)["name"] != "my-rset" {
		t.Errorf("my_rset = %v", rset)
	}
	// includeEmptyProviders: an empty provider empties the product.
	if got, err := combine(self, []source{git, empty}, "Permute", true); err != nil || len(got) != 0 {
		t.Errorf("with includeEmptyProviders: %v, %v; want none", got, err)
	}
	if _, err := combine(self, nil, "Zip", false); err == nil {
		t.Error("strategy Zip: no error")
	}
}

func TestNormalizeKey(t *testing.T) {
	for in, want := range map[string]string{"my-rset": "my_rset", "Git Tag.v2": "git_tag_v2", "--a__b--": "a_b", "ünï": "n"} {
		if got := normalizeKey(in); got != want {
			t.Errorf("normalizeKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// Problems name the ResourceSet, its file and line, and for a template
// the template's line, at the file's line when the template is a block.
func TestExpandErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		opts       Options
		want       string
		dependency bool
	}{
		{name: "template line", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: broken
  namespace: ns
spec:
  inputs:
    - name: a
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: << inputs.nmae >>
`, want: `ResourceSet/ns/broken (apps/rset.yaml:13): spec.resourcesTemplate line 4 (input set 1 of 1): executing "resourceset" at <inputs>: map has no entry for key "nmae"`},
		{name: "resources item", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: broken
  namespace: ns
spec:
  resources:
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: << bogus >>
`, want: `ResourceSet/ns/broken (apps/rset.yaml:8): spec.resources[0] line 4: function "bogus" not defined`},
		{name: "output not objects", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: broken
  namespace: ns
spec:
  resourcesTemplate: |
    just: text
`, want: `ResourceSet/ns/broken (apps/rset.yaml:7): spec.resourcesTemplate: what it writes does not read as Kubernetes objects`},
		{name: "unknown field", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: typo
  namespace: ns
spec:
  resourcesTemplat: x
`, want: `ResourceSet/ns/typo (apps/rset.yaml:1): does not read as ResourceSet: json: unknown field "resourcesTemplat"`},
		{name: "steps", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: staged
  namespace: ns
spec:
  steps:
    - name: one
      resourcesTemplate: x
`, want: "ResourceSet/ns/staged (apps/rset.yaml:8): spec.steps is not honoured"},
		{name: "service account", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: tenant
  namespace: ns
spec:
  serviceAccountName: flux
  resourcesTemplate: x
`, want: "ResourceSet/ns/tenant (apps/rset.yaml:7): spec.serviceAccountName is not honoured"},
		{name: "provider missing", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: orphan
  namespace: ns
spec:
  inputsFrom:
    - name: nowhere
  resourcesTemplate: x
`, want: "ResourceSet/ns/orphan (apps/rset.yaml:8): spec.inputsFrom[0]: no ResourceSetInputProvider ns/nowhere in the unit"},
		{name: "provider type refused", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSetInputProvider
metadata:
  name: mrs
  namespace: ns
spec:
  type: GitLabMergeRequest
  url: https://gitlab.com/a/b
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: previews
  namespace: ns
spec:
  inputsFrom:
    - name: mrs
  resourcesTemplate: x
`, want: "ResourceSetInputProvider/ns/mrs (apps/rset.yaml:1): an input provider of ResourceSet/ns/previews: spec.type GitLabMergeRequest is not read by this run: only Static, GitHubPullRequest, GitHubBranch and GitHubTag are"},
		{name: "no GitHub token", text: pullRequests, want: "ResourceSetInputProvider/flux-system/previews (apps/rset.yaml:1): an input provider of ResourceSet/flux-system/previews: type GitHubPullRequest: no GitHub token was given to read it with"},
		{name: "another host", text: strings.Replace(pullRequests, "https://github.com/acme/app", "https://evil.example/acme/app", 1), opts: Options{GitHub: &fakeGitHub{web: "https://github.com"}},
			want: `spec.url "https://evil.example/acme/app" is not on https://github.com, the GitHub server this run's token is for: it is not sent elsewhere`},
		{name: "checksumFrom", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: copies
  namespace: ns
spec:
  resourcesTemplate: |
    apiVersion: v1
    kind: Secret
    metadata:
      name: s
      annotations:
        fluxcd.controlplane.io/checksumFrom: Secret/flux-system/s
`, want: "generates Secret/s with the annotation fluxcd.controlplane.io/checksumFrom, which is not honoured"},
		{name: "copyFrom of nothing", text: copies("flux-system/s"), opts: Options{Lookup: func(context.Context, string, string, string, string) (map[string]any, error) {
			return map[string]any{}, nil
		}}, want: "ResourceSet/ns/copies (apps/rset.yaml:1): generates Secret/ns/s, which copies from Secret/flux-system/s: it is not in the cluster"},
		{name: "copyFrom not namespace/name", text: copies("s"), opts: Options{Lookup: func(context.Context, string, string, string, string) (map[string]any, error) {
			return map[string]any{}, nil
		}}, want: `generates Secret/ns/s with the annotation fluxcd.controlplane.io/copyFrom "s": not namespace/name`},
		{name: "dependency not found", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: gated
  namespace: ns
spec:
  dependsOn:
    - apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      name: helmreleases.helm.toolkit.fluxcd.io
  resourcesTemplate: x
`, opts: Options{Lookup: func(context.Context, string, string, string, string) (map[string]any, error) {
			return map[string]any{}, nil
		}},
			want: "ResourceSet/ns/gated (apps/rset.yaml:8): dependency apiextensions.k8s.io/v1/CustomResourceDefinition/helmreleases.helm.toolkit.fluxcd.io: not found", dependency: true},
		{name: "dependency on a ResourceSet elsewhere", text: `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: gated
  namespace: ns
spec:
  dependsOn:
    - apiVersion: fluxcd.controlplane.io/v1
      kind: ResourceSet
      name: addons
      namespace: ns
      ready: true
  resourcesTemplate: x
`, want: "dependency fluxcd.controlplane.io/v1/ResourceSet/ns/addons: it is not in this unit", dependency: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := expandYAML(t, tc.text, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant one containing %s", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("%T is no *Error", err)
			}
			if got := IsDependency(err); got != tc.dependency {
				t.Errorf("IsDependency = %v, want %v", got, tc.dependency)
			}
		})
	}
}

// A dependency is read from the cluster: with ready, kstatus or its
// readyExpr decides; one in the same unit is met with a note.
func TestExpandDependsOn(t *testing.T) {
	cluster := map[string]map[string]any{
		"CustomResourceDefinition/crds": {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "crds"}},
		"ConfigMap/ns/gate":             {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "gate", "namespace": "ns"}, "data": map[string]any{"gate": "closed"}},
	}
	lookup := func(_ context.Context, _, kind, ns, name string) (map[string]any, error) {
		key := kind + "/" + name
		if ns != "" {
			key = kind + "/" + ns + "/" + name
		}
		return cluster[key], nil
	}
	text := `apiVersion: v1
kind: ConfigMap
metadata:
  name: local
  namespace: ns
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: gated
  namespace: ns
spec:
  dependsOn:
    - apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      name: crds
    - apiVersion: v1
      kind: ConfigMap
      name: local
      namespace: ns
      ready: true
    - apiVersion: v1
      kind: ConfigMap
      name: gate
      namespace: ns
      ready: true
      readyExpr: data.gate == 'opened'
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: out
      namespace: ns
`
	_, err := expandYAML(t, text, Options{Lookup: lookup})
	if err == nil || !strings.Contains(err.Error(), `dependency v1/ConfigMap/ns/gate: not ready: readyExpr "data.gate == 'opened'" is false`) || !IsDependency(err) {
		t.Fatalf("error = %v, want the gate not ready", err)
	}
	cluster["ConfigMap/ns/gate"]["data"] = map[string]any{"gate": "opened"}
	x, err := expandYAML(t, text, Options{Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Notes) != 1 || !strings.Contains(x.Notes[0], "dependsOn ConfigMap/ns/local is met: it is in the same unit") {
		t.Errorf("notes = %q", x.Notes)
	}
	// No cluster: not checked, said so.
	x, err = expandYAML(t, text, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Notes) != 3 || !strings.Contains(x.Notes[0], "CustomResourceDefinition/crds not checked: there is no cluster") {
		t.Errorf("notes = %q", x.Notes)
	}
}

// d2-fleet's dependsOn: a Flux Kustomization, which is a unit and never
// in the cluster, joins the dependsOn of the Kustomizations the
// ResourceSet generates (in the ResourceSet's namespace when it names
// none); a ResourceSet beside it is expanded with it. The cluster is not
// asked.
func TestExpandDependsOnKustomization(t *testing.T) {
	lookup := func(_ context.Context, _, kind, _, name string) (map[string]any, error) {
		t.Errorf("asked the cluster for %s %s", kind, name)
		return nil, nil
	}
	x, err := expandYAML(t, `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: policies
  namespace: flux-system
spec:
  resources:
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: allow
        namespace: flux-system
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: apps
  namespace: flux-system
spec:
  dependsOn:
    - apiVersion: fluxcd.controlplane.io/v1
      kind: ResourceSet
      name: policies
      namespace: flux-system
      ready: true
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      name: infra-configs
      namespace: monitoring
      ready: true
      readyExpr: status.observedGeneration >= 0
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      name: policies
  inputs:
    - tenant: frontend
  resources:
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata:
        name: apps
        namespace: << inputs.tenant >>
      spec:
        dependsOn:
          - name: own
        path: ./
        prune: true
        sourceRef:
          kind: OCIRepository
          name: apps
    - apiVersion: v1
      kind: Namespace
      metadata:
        name: << inputs.tenant >>
`, Options{Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	deps, _, _ := unstructured.NestedSlice(x.Sets[1].Objects[0].Object, "spec", "dependsOn")
	want := []any{map[string]any{"name": "own"}, map[string]any{"name": "infra-configs", "namespace": "monitoring"}, map[string]any{"name": "policies", "namespace": "flux-system"}}
	if diff := cmp.Diff(want, deps); diff != "" {
		t.Errorf("dependsOn (-want +got):\n%s", diff)
	}
	notes := strings.Join(x.Notes, "\n")
	for _, n := range []string{
		"dependsOn ResourceSet/flux-system/policies is met: it is in the same unit",
		"spec.dependsOn[1].readyExpr not evaluated: the unit of Kustomization monitoring/infra-configs being ready stands in for it",
		"dependsOn Kustomization monitoring/infra-configs, flux-system/policies: added to the dependsOn of the 1 Kustomization(s) it generates",
	} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes lack %q:\n%s", n, notes)
		}
	}
}

// Resources win over the template's objects of the same identity, and
// an object annotated reconcile: disabled is left out.
func TestExpandDedupAndDisabled(t *testing.T) {
	x, err := expandYAML(t, `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: s
  namespace: ns
spec:
  inputs:
    - tenant: a
    - tenant: b
  resources:
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: shared
        namespace: ns
      data:
        from: resources
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: shared
      namespace: ns
    data:
      from: template
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: << inputs.tenant >>
      namespace: ns
      annotations:
        fluxcd.controlplane.io/reconcile: << if eq inputs.tenant "a" >>enabled<< else >>disabled<< end >>
`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := x.Generated()
	if diff := cmp.Diff([]string{"ConfigMap/ns/shared", "ConfigMap/ns/a"}, names(got)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if got[0].Object["data"].(map[string]any)["from"] != "resources" {
		t.Errorf("shared from %v, want resources", got[0].Object["data"])
	}
}

// The cache lists once for concurrent callers, and forgets a failure.
func TestCacheOnce(t *testing.T) {
	c := &Cache{}
	var calls int32
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sets, err := c.get(t.Context(), "k", func() ([]map[string]any, error) {
				atomic.AddInt32(&calls, 1)
				<-release
				return []map[string]any{{"id": "1"}}, nil
			})
			if err != nil || len(sets) != 1 {
				t.Errorf("%v, %v", sets, err)
			}
		}()
	}
	close(release)
	wg.Wait()
	if calls != 1 {
		t.Errorf("listed %d times, want once", calls)
	}
	fail := errors.New("boom")
	if _, err := c.get(t.Context(), "f", func() ([]map[string]any, error) { return nil, fail }); err != fail {
		t.Fatalf("error %v", err)
	}
	if sets, err := c.get(t.Context(), "f", func() ([]map[string]any, error) { return []map[string]any{{}}, nil }); err != nil || len(sets) != 1 {
		t.Errorf("after a failure: %v, %v; want asked again", sets, err)
	}
}

// BenchmarkExpand expands a ResourceSet of 1,000 input sets, a Namespace
// and a ConfigMap each, from spec.resources and spec.resourcesTemplate.
func BenchmarkExpand(b *testing.B) {
	var in strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&in, "    - tenant: t%d\n      replicas: %d\n", i, i%5)
	}
	text := strings.Replace(`apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: tenants
  namespace: ns
spec:
  inputs:
INPUTS  resources:
    - apiVersion: v1
      kind: Namespace
      metadata:
        name: << inputs.tenant | slugify >>
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: settings
      namespace: << inputs.tenant >>
    data:
      replicas: << inputs.replicas | quote >>
`, "INPUTS", in.String(), 1)
	objs, err := ssautil.ReadObjects(strings.NewReader(text))
	if err != nil {
		b.Fatal(err)
	}
	origin := func(object.ID) Origin { return Origin{File: file, Data: []byte(text)} }
	for b.Loop() {
		x, err := Expand(b.Context(), objs, origin, Options{})
		if err != nil || len(x.Generated()) != 2000 {
			b.Fatalf("%v, %d objects", err, len(x.Generated()))
		}
	}
}

// One ResourceSet generates at most maxObjects objects.
func TestExpandBoundsObjects(t *testing.T) {
	_, err := expandYAML(t, `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: many
  namespace: ns
spec:
  resourcesTemplate: |
    << range $i := until 10000 >>
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: "cm-<< $i >>"}
    ---
    apiVersion: v1
    kind: Secret
    metadata: {name: "s-<< $i >>"}
    << end >>
`, Options{})
	if err == nil || !strings.Contains(err.Error(), "ResourceSet/ns/many (apps/rset.yaml:7): generates more than 10000 objects") {
		t.Fatalf("error = %v", err)
	}
}

// copies is a ResourceSet generating a Secret copied from the cluster's
// Secret from, a ConfigMap copied from its ConfigMap flux-system/info,
// and a Service with the annotation, which is left as it is.
func copies(from string) string {
	return `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: copies
  namespace: ns
spec:
  resources:
    - apiVersion: v1
      kind: Secret
      metadata:
        name: s
        namespace: ns
        annotations:
          fluxcd.controlplane.io/copyFrom: ` + from + `
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: info
        namespace: ns
        annotations:
          fluxcd.controlplane.io/copyFrom: flux-system/info
      data:
        stale: yes
    - apiVersion: v1
      kind: Service
      metadata:
        name: svc
        namespace: ns
        annotations:
          fluxcd.controlplane.io/copyFrom: flux-system/svc
      spec:
        ports: [{port: 80}]
`
}

// copyFrom, as the operator applies it: a ConfigMap gets the data and
// binaryData of the cluster's, a Secret its data as stringData and its
// type; another kind is left as it is; the objects are read once each,
// as the run's identity (Lookup); without a cluster nothing is read and
// a note says so.
func TestExpandCopyFrom(t *testing.T) {
	t.Parallel()
	var read []string
	lookup := func(_ context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
		read = append(read, apiVersion+"/"+kind+"/"+namespace+"/"+name)
		switch kind + "/" + name {
		case "Secret/ghcr-auth":
			return map[string]any{"type": "kubernetes.io/dockerconfigjson", "data": map[string]any{".dockerconfigjson": "e30="}}, nil
		case "ConfigMap/info":
			return map[string]any{"data": map[string]any{"CLUSTER": "staging"}, "binaryData": map[string]any{"logo": "AAE="}}, nil
		}
		return map[string]any{}, nil
	}
	x, err := expandYAML(t, copies("flux-system/ghcr-auth"), Options{Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	for _, g := range x.Generated() {
		got[g.GetKind()] = g.Object
	}
	if diff := cmp.Diff(map[string]any{".dockerconfigjson": "{}"}, got["Secret"]["stringData"]); diff != "" || got["Secret"]["type"] != "kubernetes.io/dockerconfigjson" {
		t.Errorf("the Secret: %v (-want +got stringData):\n%s", got["Secret"], diff)
	}
	if diff := cmp.Diff(map[string]any{"CLUSTER": "staging"}, got["ConfigMap"]["data"]); diff != "" {
		t.Errorf("the ConfigMap's data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"logo": "AAE="}, got["ConfigMap"]["binaryData"]); diff != "" {
		t.Errorf("the ConfigMap's binaryData (-want +got):\n%s", diff)
	}
	if _, ok := got["Service"]["data"]; ok {
		t.Errorf("the Service was copied into: %v", got["Service"])
	}
	if diff := cmp.Diff([]string{"v1/Secret/flux-system/ghcr-auth", "v1/ConfigMap/flux-system/info"}, read); diff != "" {
		t.Errorf("read (-want +got):\n%s", diff)
	}

	offline, err := expandYAML(t, copies("flux-system/ghcr-auth"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Join(offline.Notes, "\n"); !strings.Contains(n, "ResourceSet/ns/copies: Secret/ns/s copies the data of Secret/flux-system/ghcr-auth from the cluster when applied; without a cluster it is shown as generated") {
		t.Errorf("offline notes: %s", n)
	}
}
