package resourceset

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
)

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func summary(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, u := range objs {
		out = append(out, u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName())
	}
	return out
}

// The operator's documented example: inline inputs, a resourcesTemplate
// rendered once per input, slugify and toYaml, owner labels and
// commonMetadata on every object.
func TestExpandInlineInputs(t *testing.T) {
	t.Parallel()
	rset := obj(t, `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: apps, namespace: flux-system}
spec:
  commonMetadata:
    labels: {app.kubernetes.io/managed-by: flux-operator}
  inputs:
    - tenant: "Team One"
      tag: "6.7.x"
    - tenant: "Team Two"
      tag: "6.6.x"
  resourcesTemplate: |
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: << inputs.tenant | slugify >>
    ---
    apiVersion: source.toolkit.fluxcd.io/v1
    kind: OCIRepository
    metadata:
      name: podinfo
      namespace: << inputs.tenant | slugify >>
    spec:
      ref:
        semver: << inputs.tag | quote >>
      url: oci://ghcr.io/stefanprodan/manifests/podinfo
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: from
      namespace: << inputs.tenant | slugify >>
    data:
      provider: << inputs.provider.kind >>
      values: |
        << toYaml (dict "tenant" inputs.tenant) | nindent 4 >>
`)
	got, err := Expand(t.Context(), rset, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Namespace//team-one", "OCIRepository/team-one/podinfo", "ConfigMap/team-one/from", "Namespace//team-two", "OCIRepository/team-two/podinfo", "ConfigMap/team-two/from"}
	if diff := cmp.Diff(want, summary(got.Objects)); diff != "" {
		t.Fatalf("objects (-want +got):\n%s", diff)
	}
	repo := got.Objects[4]
	if v, _, _ := unstructured.NestedString(repo.Object, "spec", "ref", "semver"); v != "6.6.x" {
		t.Errorf("semver %q", v)
	}
	if l := repo.GetLabels(); l["resourceset.fluxcd.controlplane.io/name"] != "apps" || l["resourceset.fluxcd.controlplane.io/namespace"] != "flux-system" || l["app.kubernetes.io/managed-by"] != "flux-operator" {
		t.Errorf("labels %v", l)
	}
	cm := got.Objects[2]
	if v, _, _ := unstructured.NestedString(cm.Object, "data", "provider"); v != "ResourceSet" {
		t.Errorf("inputs.provider.kind %q", v)
	}
	if v, _, _ := unstructured.NestedString(cm.Object, "data", "values"); strings.TrimSpace(v) != "tenant: Team One" {
		t.Errorf("toYaml %q", v)
	}
}

// Static providers named or selected export their defaultValues with an
// id; Permute makes every combination, each source's input under its
// normalized name; a resource wins over the template, and an object
// annotated reconcile: disabled is left out.
func TestExpandProvidersAndPermute(t *testing.T) {
	t.Parallel()
	providers := []*unstructured.Unstructured{
		obj(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata: {name: region-eu, namespace: apps, labels: {kind: region}}\nspec: {type: Static, defaultValues: {region: eu}}\n"),
		obj(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata: {name: region-us, namespace: apps, labels: {kind: region}}\nspec: {type: Static, defaultValues: {region: us}}\n"),
		obj(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata: {name: region-other, namespace: elsewhere, labels: {kind: region}}\nspec: {type: Static, defaultValues: {region: xx}}\n"),
	}
	flat := obj(t, `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: regions, namespace: apps}
spec:
  inputsFrom:
    - kind: ResourceSetInputProvider
      selector: {matchLabels: {kind: region}}
  resources:
    - apiVersion: v1
      kind: ConfigMap
      metadata: {name: "region-<< inputs.region >>", annotations: {id: "<< inputs.id | quote >>"}}
      data: {from: resources}
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: region-<< inputs.region >>
    data: {from: template}
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: off-<< inputs.region >>
      annotations: {fluxcd.controlplane.io/reconcile: disabled}
`)
	got, err := Expand(t.Context(), flat, providers, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ConfigMap//region-eu", "ConfigMap//region-us"}, summary(got.Objects)); diff != "" {
		t.Fatalf("objects (-want +got):\n%s", diff)
	}
	if v := got.Objects[0].Object["data"].(map[string]any)["from"]; v != "resources" {
		t.Errorf("the template won over resources: %v", v)
	}
	if a := got.Objects[0].GetAnnotations()["id"]; a != id("region-eu") {
		t.Errorf("id %q", a)
	}

	permute := obj(t, `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: apps, namespace: apps}
spec:
  inputStrategy: {name: Permute}
  inputs: [{app: web}, {app: api}]
  inputsFrom: [{name: region-eu}, {name: region-us}]
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: << inputs.apps.app >>-<< inputs.region_eu.region >>-<< inputs.region_us.region >>
`)
	got, err = Expand(t.Context(), permute, providers, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ConfigMap//web-eu-us", "ConfigMap//api-eu-us"}, summary(got.Objects)); diff != "" {
		t.Errorf("permutations (-want +got):\n%s", diff)
	}
}

// What is not honoured yet is refused by name, as is what does not read.
func TestExpandRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ spec, want string }{
		{"  steps: [{name: one, resources: []}]\n", "spec.steps: not supported yet"},
		{"  dependsOn: [{apiVersion: v1, kind: Namespace, name: x}]\n  resources: [{apiVersion: v1, kind: Namespace, metadata: {name: x}}]\n", "spec.dependsOn[0]: not supported yet: a dependency on Namespace v1"},
		{"  dependsOn: [{apiVersion: fluxcd.controlplane.io/v1, kind: ResourceSet, name: policies}]\n  resources: [{apiVersion: v1, kind: Namespace, metadata: {name: x}}]\n", "spec.dependsOn[0]: ResourceSet apps/policies is not among the unit's objects"},
		{"  serviceAccountName: deployer\n  resources: [{apiVersion: v1, kind: Namespace, metadata: {name: x}}]\n", "spec.serviceAccountName: not supported yet"},
		{"  resourcesTemplat: x\n", "spec: resourcesTemplat is not a field this tool knows"},
		{"  inputsFrom: [{name: gh}]\n  resources: [{apiVersion: v1, kind: Namespace, metadata: {name: x}}]\n", "spec.inputsFrom[0]: ResourceSetInputProvider apps/gh is not among the unit's objects"},
		{"  inputs: [{a: 1}]\n  resourcesTemplate: \"kind: ConfigMap\\napiVersion: v1\\nmetadata: {name: << inputs.b >>}\\n\"\n", `map has no entry for key "b"`},
		{"  inputsFrom: [{name: pr}]\n  resources: [{apiVersion: v1, kind: Namespace, metadata: {name: x}}]\n", `ResourceSetInputProvider apps/pr: spec.url: github.com is not on the job's GitHub server (none)`},
		// A hostile template may not exhaust the runner.
		{"  resourcesTemplate: \"<< repeat 100000000 \\\"xxxxxxxxxx\\\" >>\"\n", "repeat: 100000000 times 10 bytes is over 16 MiB"},
		{"  resourcesTemplate: \"<< range until 100000000 >>x<< end >>\"\n", "more than 10000 items"},
	} {
		rset := obj(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata: {name: apps, namespace: apps}\nspec:\n"+tc.spec)
		pr := obj(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata: {name: pr, namespace: apps}\nspec: {type: GitHubPullRequest, url: https://github.com/acme/app}\n")
		if _, err := Expand(t.Context(), rset, []*unstructured.Unstructured{pr}, nil, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.spec, err, tc.want)
		}
	}
}

// What one rendering and a whole ResourceSet render are bounded (the
// limits lowered here from 16 and 64 MiB, which the race detector takes
// a minute to reach).
func TestBuildBudget(t *testing.T) {
	maxRendered, maxTotal = 1<<20, 4<<20
	defer func() { maxRendered, maxTotal = MaxRendered, MaxTotal }()
	tmpl := "<< range until 10000 >><< range until 20 >># xxxxxx\n<< end >><< end >>" // 1.5 MiB
	if _, err := build(tmpl, nil, nil); err == nil || !strings.Contains(err.Error(), "renders more than 1 MiB") {
		t.Errorf("one rendering: %v", err)
	}
	sets := make([]map[string]any, 10)
	for i := range sets {
		sets[i] = map[string]any{"i": i}
	}
	tmpl = "<< range until 10000 >><< range until 10 >># xxxxxx\n<< end >><< end >>" // 0.8 MiB a set
	if _, err := build(tmpl, nil, sets); err == nil || !strings.Contains(err.Error(), "the ResourceSet renders more than 4 MiB in all") {
		t.Errorf("in all: %v", err)
	}
}

// d2-fleet's dependsOn: a ResourceSet beside it is applied with it; a
// Kustomization joins the dependsOn of the Kustomizations it generates.
func TestExpandDependsOn(t *testing.T) {
	t.Parallel()
	policies := obj(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata: {name: policies, namespace: flux-system}\nspec: {resources: [{apiVersion: v1, kind: ConfigMap, metadata: {name: allow}}]}\n")
	apps := obj(t, `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: apps, namespace: flux-system}
spec:
  dependsOn:
    - {apiVersion: fluxcd.controlplane.io/v1, kind: ResourceSet, name: policies, ready: true}
    - {apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, name: infra-configs, namespace: monitoring, ready: true, readyExpr: status.observedGeneration >= 0}
  inputs: [{tenant: frontend}]
  resources:
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata: {name: apps, namespace: << inputs.tenant >>}
      spec: {dependsOn: [{name: own}], path: ./, sourceRef: {kind: OCIRepository, name: apps}, interval: 5m, prune: true}
    - {apiVersion: v1, kind: Namespace, metadata: {name: << inputs.tenant >>}}
`)
	got, err := Expand(t.Context(), apps, nil, []*unstructured.Unstructured{policies, apps}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	deps, _, _ := unstructured.NestedSlice(got.Objects[0].Object, "spec", "dependsOn")
	want := []any{map[string]any{"name": "own"}, map[string]any{"name": "infra-configs", "namespace": "monitoring"}}
	if diff := cmp.Diff(want, deps); diff != "" {
		t.Errorf("dependsOn (-want +got):\n%s", diff)
	}
	notes := strings.Join(got.Notes, "\n")
	for _, n := range []string{"dependsOn ResourceSet flux-system/policies is applied with it, in the same unit", "spec.dependsOn[1].readyExpr is read as the readiness of unit infra-configs", "added to the dependsOn of the 1 Kustomization(s) it generates"} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes lack %q:\n%s", n, notes)
		}
	}
}

// fakeGitHub serves listings as GitHub would.
type fakeGitHub struct {
	pulls          []github.OpenPull
	branches, tags []github.Ref
	asked          []string
}

func (f *fakeGitHub) ListOpenPulls(_ context.Context, owner, repo string) ([]github.OpenPull, error) {
	f.asked = append(f.asked, "pulls "+owner+"/"+repo)
	return f.pulls, nil
}

func (f *fakeGitHub) ListBranches(_ context.Context, owner, repo string) ([]github.Ref, error) {
	f.asked = append(f.asked, "branches "+owner+"/"+repo)
	return f.branches, nil
}

func (f *fakeGitHub) ListTags(_ context.Context, owner, repo string) ([]github.Ref, error) {
	f.asked = append(f.asked, "tags "+owner+"/"+repo)
	return f.tags, nil
}

// GitHub providers export what the operator's do: per open pull request
// its number as id, head branch and SHA, title, author and labels;
// per branch or tag its name's id and SHA; filtered by include and
// exclude, labels, semver and limit; each over defaultValues.
func TestGitHubProviders(t *testing.T) {
	t.Parallel()
	gh := &fakeGitHub{
		pulls: []github.OpenPull{
			{Number: 7, HeadRef: "feat/a", HeadSHA: "aaa", Title: "A", Author: "ann", Labels: []string{"deploy/flux-preview"}},
			{Number: 6, HeadRef: "feat/b", HeadSHA: "bbb", Title: "B", Author: "bob"},
			{Number: 5, HeadRef: "renovate/x", HeadSHA: "ccc", Labels: []string{"deploy/flux-preview"}},
		},
		branches: []github.Ref{{Name: "main", SHA: "m"}, {Name: "release/1", SHA: "r1"}, {Name: "release/2", SHA: "r2"}},
		tags:     []github.Ref{{Name: "v1.0.0", SHA: "t1"}, {Name: "v1.2.0", SHA: "t2"}, {Name: "v2.0.0", SHA: "t3"}, {Name: "latest", SHA: "t4"}},
	}
	opts := Options{GitHub: gh, GitHubServer: "https://github.com"}
	provider := func(typ, filter string) *unstructured.Unstructured {
		return obj(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata: {name: p, namespace: apps}\nspec:\n  type: "+typ+"\n  url: https://github.com/acme/app\n  defaultValues: {env: preview, branch: none}\n"+filter)
	}
	for _, tc := range []struct {
		typ, filter string
		want        []map[string]any
	}{
		{"GitHubPullRequest", "  filter: {labels: [deploy/flux-preview], excludeBranch: '^renovate/'}\n", []map[string]any{
			{"id": "7", "sha": "aaa", "branch": "feat/a", "title": "A", "author": "ann", "labels": []any{"deploy/flux-preview"}, "env": "preview"}}},
		{"GitHubPullRequest", "  filter: {limit: 2}\n", []map[string]any{
			{"id": "7", "sha": "aaa", "branch": "feat/a", "title": "A", "author": "ann", "labels": []any{"deploy/flux-preview"}, "env": "preview"},
			{"id": "6", "sha": "bbb", "branch": "feat/b", "title": "B", "author": "bob", "env": "preview"}}},
		{"GitHubBranch", "  filter: {includeBranch: '^release/'}\n", []map[string]any{
			{"id": id("release/1"), "sha": "r1", "branch": "release/1", "env": "preview"},
			{"id": id("release/2"), "sha": "r2", "branch": "release/2", "env": "preview"}}},
		{"GitHubTag", "  filter: {semver: '>=1.0.0', limit: 2}\n", []map[string]any{
			{"id": id("v2.0.0"), "sha": "t3", "tag": "v2.0.0", "env": "preview", "branch": "none"},
			{"id": id("v1.2.0"), "sha": "t2", "tag": "v1.2.0", "env": "preview", "branch": "none"}}},
	} {
		got, _, err := providerInputs(t.Context(), provider(tc.typ, tc.filter), opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.typ, tc.filter, diff)
		}
	}
	if !slices.Equal(gh.asked, []string{"pulls acme/app", "pulls acme/app", "branches acme/app", "tags acme/app"}) {
		t.Errorf("asked %v", gh.asked)
	}
	// Another server than the job's is never asked.
	other := obj(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata: {name: p, namespace: apps}\nspec: {type: GitHubBranch, url: 'https://evil.example/acme/app'}\n")
	if _, _, err := providerInputs(t.Context(), other, opts); err == nil || !strings.Contains(err.Error(), "evil.example is not on the job's GitHub server (https://github.com)") {
		t.Errorf("another server: %v", err)
	}
}

// Providers that export no inputs make no objects (the operator prunes
// what they made), and the expansion says its inputs came from a
// service, so the unit is built again on every run.
func TestNoInputsFromProvidersMakeNothing(t *testing.T) {
	t.Parallel()
	rset := obj(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata: {name: previews, namespace: apps}\nspec:\n  inputsFrom: [{name: prs}]\n  resourcesTemplate: \"apiVersion: v1\\nkind: Namespace\\nmetadata: {name: pr-<< inputs.id >>}\\n\"\n")
	prs := obj(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSetInputProvider\nmetadata: {name: prs, namespace: apps}\nspec: {type: GitHubPullRequest, url: 'https://github.com/acme/app'}\n")
	got, err := Expand(t.Context(), rset, []*unstructured.Unstructured{prs}, nil, Options{GitHub: &fakeGitHub{}, GitHubServer: "https://github.com"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Objects) != 0 || !got.External {
		t.Errorf("objects %v, external %v", summary(got.Objects), got.External)
	}
}
