package main

import (
	"encoding/json"
	"fmt"
	"hash/adler32"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Flux Operator's ResourceSets expanded by the run, as the operator would
// expand them in a cluster: their generated objects are the unit's own.

// deleteNamespaces deletes namespaces a test's ResourceSet generated.
func deleteNamespaces(t *testing.T, names ...string) {
	t.Cleanup(func() {
		for _, n := range names {
			_ = cluster.Client(t).CoreV1().Namespaces().Delete(t.Context(), n, metav1.DeleteOptions{})
		}
	})
}

// gone says whether namespace n is deleted or being deleted.
func gone(t *testing.T, n string) bool {
	t.Helper()
	got, err := cluster.Client(t).CoreV1().Namespaces().Get(t.Context(), n, metav1.GetOptions{})
	return apierrors.IsNotFound(err) || (err == nil && got.DeletionTimestamp != nil)
}

const tenantsSet = `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: tenants
  namespace: NS
spec:
  inputs:
  - tenant: NS-a
    team: alpha
  - tenant: NS-b
    team: beta
  resources:
  - apiVersion: v1
    kind: Namespace
    metadata:
      name: << inputs.tenant >>
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: tenant
      namespace: << inputs.tenant >>
    data:
      team: << inputs.team | quote >>
      slug: << inputs.team | upper | slugify >>
`

// Inline inputs generate a Namespace and a ConfigMap per input set,
// applied and recorded as the unit's; the ResourceSet itself is not
// applied; an input set removed is garbage-collected by the next run.
func TestResourceSetInlineInputs(t *testing.T) {
	c := newCLI(t)
	a, b := c.ns+"-a", c.ns+"-b"
	deleteNamespaces(t, a, b)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [rset.yaml]\n")
	writeFile(t, filepath.Join(dir, "rset.yaml"), strings.ReplaceAll(tenantsSet, "NS", c.ns))
	o, r := c.apply("--name", "tenants", "--path", dir, "--namespace", c.ns)
	if o.code != exitOK || !r.Ready {
		t.Fatalf("exit %d, result %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	wantActions(t, r, map[string]result.Action{
		"Namespace/" + a: result.Created, "Namespace/" + b: result.Created,
		"ConfigMap/" + a + "/tenant": result.Created, "ConfigMap/" + b + "/tenant": result.Created,
	})
	if len(r.Entries) != 4 {
		t.Errorf("%d entries, want the 4 generated objects: %v", len(r.Entries), actions(r))
	}
	contains(t, "notes", strings.Join(r.Notes, "\n"), "ResourceSet/"+c.ns+"/tenants: Flux Operator's ResourceSet: not applied", "ResourceSet/"+c.ns+"/tenants: 2 input set(s), 4 object(s) generated")
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(b).Get(t.Context(), "tenant", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["team"] != "beta" || cm.Data["slug"] != "beta" || cm.Labels["resourceset.fluxcd.controlplane.io/name"] != "tenants" || cm.Labels["kustomize-deploy.dev/name"] != "tenants" {
		t.Errorf("ConfigMap %v %v", cm.Data, cm.Labels)
	}
	for _, e := range r.Entries {
		if e.Source != "rset.yaml" {
			t.Errorf("%s: source %q, want rset.yaml", e.Object, e.Source)
		}
	}

	// Team b leaves: its namespace and ConfigMap are pruned.
	writeFile(t, filepath.Join(dir, "rset.yaml"), strings.Replace(strings.ReplaceAll(tenantsSet, "NS", c.ns), "  - tenant: "+b+"\n    team: beta\n", "", 1))
	o, r = c.apply("--name", "tenants", "--path", dir, "--namespace", c.ns)
	if o.code != exitOK || !r.Ready {
		t.Fatalf("second apply: exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	wantActions(t, r, map[string]result.Action{"Namespace/" + b: result.Deleted, "ConfigMap/" + b + "/tenant": result.Deleted, "Namespace/" + a: result.Unchanged})
	if !gone(t, b) || gone(t, a) {
		t.Errorf("namespace %s gone %v (want true), %s gone %v (want false)", b, gone(t, b), a, gone(t, a))
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "tenants")
	if err != nil || inv == nil || len(inv.Entries) != 2 {
		t.Fatalf("inventory %+v, %v: want the 2 objects of team a", inv, err)
	}
}

// A Static input provider: one input set of its defaultValues, an id
// from its name.
func TestResourceSetStaticProvider(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [rsip.yaml, rset.yaml]\n")
	writeFile(t, filepath.Join(dir, "rsip.yaml"), `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSetInputProvider
metadata:
  name: cluster-info
  labels:
    inputs: cluster
spec:
  type: Static
  defaultValues:
    region: eu-west-1
`)
	writeFile(t, filepath.Join(dir, "rset.yaml"), `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: info
spec:
  inputsFrom:
  - selector:
      matchLabels:
        inputs: cluster
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: info-<< inputs.id >>
      namespace: << inputs.provider.namespace >>
    data:
      region: << inputs.region >>
`)
	o, r := c.apply("--name", "info", "--path", dir, "--namespace", c.ns, "--target-namespace", c.ns)
	if o.code != exitOK || !r.Ready {
		t.Fatalf("exit %d, result %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	// adler32("cluster-info"), as flux-operator build resourceset makes it.
	id := fmt.Sprint(adler32.Checksum([]byte("cluster-info")))
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/info-" + id: result.Created})
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "info-"+id, metav1.GetOptions{})
	if err != nil || cm.Data["region"] != "eu-west-1" {
		t.Fatalf("ConfigMap %v, %v", cm, err)
	}
	contains(t, "notes", strings.Join(r.Notes, "\n"), "ResourceSetInputProvider/"+c.ns+"/cluster-info: Flux Operator's ResourceSetInputProvider: not applied")
}

// A template error fails the unit at the ResourceSet's file and the
// template's line; nothing is applied.
func TestResourceSetTemplateError(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [configmap.yaml, rset.yaml]\n")
	writeFile(t, filepath.Join(dir, "configmap.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: untouched\n")
	writeFile(t, filepath.Join(dir, "rset.yaml"), `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: broken
spec:
  inputs:
  - name: a
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: << inputs.nmae >>
`)
	o, r := c.apply("--name", "broken", "--path", dir, "--namespace", c.ns)
	if o.code != exitFail || r.Reason != result.ReasonBuildFailed {
		t.Fatalf("exit %d, %s, want 1 BuildFailed\n%s", o.code, r.Reason, o.stderr)
	}
	contains(t, "message", r.Message, `ResourceSet/`+c.ns+`/broken (rset.yaml:12): spec.resourcesTemplate line 4 (input set 1 of 1): executing "resourceset" at <inputs>: map has no entry for key "nmae"`)
	if len(r.FileErrors) != 1 || r.FileErrors[0].File != "rset.yaml" || r.FileErrors[0].Line != 12 {
		t.Errorf("file errors %+v, want rset.yaml:12", r.FileErrors)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "untouched", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unit's other objects were applied: %v", err)
	}
}

// fakePulls is GitHub's REST API for one repository's open pull
// requests, which a test opens and closes.
type fakePulls struct {
	mu    sync.Mutex
	open  []map[string]any
	calls []string // "METHOD path authorization"
}

func (f *fakePulls) set(prs ...map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open = prs
}

func (f *fakePulls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
	if r.Method != http.MethodGet || r.URL.Path != "/repos/acme/fleet/pulls" || r.URL.Query().Get("state") != "open" {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(f.open)
}

func pull(number int, branch string, labels ...string) map[string]any {
	ls := make([]map[string]any, len(labels))
	for i, l := range labels {
		ls[i] = map[string]any{"name": l}
	}
	return map[string]any{"number": number, "title": fmt.Sprintf("PR %d", number), "user": map[string]any{"login": "dev"},
		"head": map[string]any{"ref": branch, "sha": fmt.Sprintf("a%039d", number)}, "labels": ls}
}

// gitRepo writes files into a new git repository and returns its path.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		writeFile(t, filepath.Join(dir, name), text)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "fleet"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// previewFleet is a Flux repository whose previews Kustomization holds a
// ResourceSet generating, per pull request labelled "preview", a
// namespace and a Kustomization deploying ./app into it.
const previewFleet = `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSetInputProvider
metadata:
  name: pull-requests
  namespace: NS
spec:
  type: GitHubPullRequest
  url: GITHUB/acme/fleet
  filter:
    labels: [preview]
  defaultValues:
    env: preview
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: previews
  namespace: NS
spec:
  inputsFrom:
  - kind: ResourceSetInputProvider
    name: pull-requests
  resourcesTemplate: |
    apiVersion: v1
    kind: Namespace
    metadata:
      name: NS-pr-<< inputs.id >>
    ---
    apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: app-pr-<< inputs.id >>
      namespace: NS
    spec:
      interval: 10m
      prune: true
      path: ./app
      targetNamespace: NS-pr-<< inputs.id >>
      sourceRef:
        kind: GitRepository
        name: flux-system
        namespace: flux-system
      postBuild:
        substitute:
          BRANCH: << inputs.branch | quote >>
          SHA: << inputs.sha | quote >>
          ENV: << inputs.env >>
`

// A ResourceSet per pull request gives preview environments: a pull
// request opened (and labelled) is deployed, its Kustomization run as a
// unit of the configuration; closed, the next run collects it.
func TestResourceSetPullRequestPreviews(t *testing.T) {
	c := newCLI(t)
	gh := &fakePulls{}
	srv := httptest.NewServer(gh)
	t.Cleanup(srv.Close)
	c.env["GITHUB_TOKEN"] = "ghs_resourcesettoken"
	c.env["GITHUB_API_URL"] = srv.URL
	preview := c.ns + "-pr-7"
	deleteNamespaces(t, preview, c.ns+"-pr-8")
	repo := gitRepo(t, map[string]string{
		"clusters/local/flux-system/gotk-sync.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m0s
  ref:
    branch: main
  url: ssh://git@github.com/acme/fleet
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m0s
  path: ./clusters/local
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`,
		"clusters/local/flux-system/kustomization.yaml": "resources: [gotk-sync.yaml]\n",
		"clusters/local/previews.yaml": strings.ReplaceAll(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: previews
  namespace: NS
spec:
  interval: 10m
  prune: true
  path: ./previews
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
`, "NS", c.ns),
		"previews/kustomization.yaml": "resources: [previews.yaml]\n",
		"previews/previews.yaml":      strings.NewReplacer("NS", c.ns, "GITHUB", srv.URL).Replace(previewFleet),
		"app/kustomization.yaml":      "resources: [configmap.yaml]\n",
		"app/configmap.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  branch: \"${BRANCH}\"\n  sha: \"${SHA}\"\n  env: ${ENV}\n",
	})
	config := filepath.Join(repo, "clusters/local")

	// Pull request 7 is labelled preview, 8 is not.
	gh.set(pull(7, "feat/seven", "preview"), pull(8, "feat/eight"))
	o, s := c.runConfig("apply", "--config", config)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	units := unitsByName(s)
	if units["previews"] == nil || units["app-pr-7"] == nil || units["app-pr-8"] != nil {
		t.Fatalf("units %v: want previews and app-pr-7 only", keys(units))
	}
	wantActions(t, units["previews"], map[string]result.Action{"Namespace/" + preview: result.Created})
	wantActions(t, units["app-pr-7"], map[string]result.Action{"ConfigMap/" + preview + "/app": result.Created})
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(preview).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["branch"] != "feat/seven" || cm.Data["sha"] != fmt.Sprintf("a%039d", 7) || cm.Data["env"] != "preview" {
		t.Errorf("ConfigMap data %v", cm.Data)
	}
	if gone(t, c.ns+"-pr-8") == false {
		t.Errorf("pull request 8 (not labelled preview) was deployed")
	}
	for _, call := range gh.calls {
		if !strings.HasSuffix(call, "Bearer ghs_resourcesettoken") {
			t.Errorf("GitHub call %q without the run's token", call)
		}
	}
	if n := len(gh.calls); n != 1 {
		t.Errorf("GitHub was asked %d times, want once for the run (discovery and the unit share the answer)", n)
	}
	if strings.Contains(o.stdout+o.stderr, "ghs_resourcesettoken") {
		t.Error("the token was printed")
	}

	// Pull request 7 is updated: the next run deploys its new head.
	head := pull(7, "feat/seven", "preview")
	head["head"].(map[string]any)["sha"] = "beef01"
	gh.set(head)
	if o, s = c.runConfig("apply", "--config", config); o.code != exitOK || !s.Ready {
		t.Fatalf("update: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if cm, err = cluster.Client(t).CoreV1().ConfigMaps(preview).Get(t.Context(), "app", metav1.GetOptions{}); err != nil || cm.Data["sha"] != "beef01" {
		t.Errorf("after the update: %v, %v", cm.Data, err)
	}

	// Pull request 7 is closed: GitHub no longer lists it.
	gh.set()
	o, s = c.runConfig("apply", "--config", config)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("after closing: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	units = unitsByName(s)
	if r := units["app-pr-7"]; r == nil || r.Reason != result.ReasonDeleteSucceed {
		t.Errorf("app-pr-7 not garbage-collected: %+v", r)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(preview).Get(t.Context(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) && !gone(t, preview) {
		t.Errorf("the preview's ConfigMap is still there: %v", err)
	}
	// The previews unit ran before the units that left were collected:
	// its namespace still held app-pr-7's ConfigMap, which prune never
	// deletes with it. The next run deletes the namespace.
	for _, e := range units["previews"].Entries {
		if e.Object.Kind == "Namespace" && (e.Action != result.Skipped || !strings.Contains(e.Reason, "this unit does not own")) {
			t.Errorf("namespace %s: %s (%s), want skipped: it holds another unit's objects", e.Object, e.Action, e.Reason)
		}
	}
	o, s = c.runConfig("apply", "--config", config)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("the run after: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	wantActions(t, unitsByName(s)["previews"], map[string]result.Action{"Namespace/" + preview: result.Deleted})
	if !gone(t, preview) {
		t.Errorf("namespace %s still there", preview)
	}
	if inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, "app-pr-7"); inv != nil {
		t.Errorf("app-pr-7's inventory is still there: %+v", inv.Status)
	}
}

func keys(m map[string]*result.Result) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The GitHub token ResourceSetInputProviders are listed with (the CLI's
// GITHUB_TOKEN) never shows in anything printed: build, apply and diff,
// text and JSON, GitHub answering or refusing.
func TestLeakScanResourceSetGitHubToken(t *testing.T) {
	l := newLeakCLI(t)
	const token = `ghp_lk-token-Q7w+/=&"\ %é中'end`
	l.scan.Secret("GitHub token", token)
	gh := &fakePulls{}
	srv := httptest.NewServer(gh)
	t.Cleanup(srv.Close)
	l.env["GITHUB_TOKEN"] = token
	l.env["GITHUB_API_URL"] = srv.URL
	gh.set(pull(3, "feat/three"))
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [previews.yaml]\n")
	set := strings.NewReplacer("NS", l.ns, "GITHUB", srv.URL).Replace(`apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSetInputProvider
metadata:
  name: prs
spec:
  type: GitHubPullRequest
  url: GITHUB/acme/fleet
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: previews
spec:
  inputsFrom:
  - name: prs
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: preview-<< inputs.id >>
    data:
      title: << inputs.title | quote >>
`)
	writeFile(t, filepath.Join(dir, "previews.yaml"), set)
	unit := []string{"--name", "previews", "--path", dir, "-n", l.ns}
	l.both("build", append([]string{"build"}, unit...)...)
	if _, js := l.both("apply", append([]string{"apply"}, unit...)...); js.code != exitOK {
		t.Fatalf("apply: exit %d\n%s", js.code, js.stderr)
	}
	gh.set(pull(3, "feat/three"), pull(4, "feat/four"))
	l.both("diff", append([]string{"diff"}, unit...)...)
	// A repository the token may not read: the error names the listing.
	writeFile(t, filepath.Join(dir, "previews.yaml"), strings.Replace(set, "acme/fleet", "acme/private", 1))
	text, _ := l.both("apply refused", append([]string{"apply"}, unit...)...)
	if text.code != exitFail || !strings.Contains(text.stdout+text.stderr, "listing the open pull requests of acme/private") {
		t.Errorf("exit %d, want 1 naming the listing:\n%s\n%s", text.code, text.stdout, text.stderr)
	}
	for _, call := range gh.calls {
		if !strings.HasSuffix(call, "Bearer "+token) {
			t.Errorf("GitHub call without the token: %s", l.scan.Redact(call))
		}
	}
}

// A HelmRelease a ResourceSet generates renders into its chart's objects,
// as the unit's own HelmReleases do; the HelmRepository shared by every
// input set is generated once.
func TestResourceSetGeneratesHelmReleases(t *testing.T) {
	c := newCLI(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [rset.yaml]\n")
	writeFile(t, filepath.Join(dir, "rset.yaml"), strings.NewReplacer("NS", c.ns, "REPO", repo.URL).Replace(`apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: web
  namespace: NS
spec:
  inputs:
  - greeting: hola
  resources:
  - apiVersion: source.toolkit.fluxcd.io/v1
    kind: HelmRepository
    metadata:
      name: charts
      namespace: NS
    spec:
      interval: 1h
      url: REPO
  - apiVersion: helm.toolkit.fluxcd.io/v2
    kind: HelmRelease
    metadata:
      name: web
      namespace: NS
    spec:
      interval: 10m
      chart:
        spec:
          chart: web
          version: "1.0.0"
          sourceRef:
            kind: HelmRepository
            name: charts
      values:
        greeting: << inputs.greeting >>
`))
	o, r := c.apply("--name", "web", "--path", dir, "--chart-cache", t.TempDir())
	if o.code != exitOK || !r.Ready {
		t.Fatalf("exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	wantActions(t, r, map[string]result.Action{"Deployment/" + c.ns + "/web": result.Created, "Service/" + c.ns + "/web": result.Created})
	if len(r.Releases) != 1 || r.Releases[0].Chart != "web" {
		t.Errorf("releases %+v", r.Releases)
	}
	contains(t, "progress", o.stderr, "HelmRelease/"+c.ns+"/web: chart web 1.0.0")
	if cm, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "web-settings", metav1.GetOptions{}); err != nil || cm.Data["greeting"] != "hola" {
		t.Errorf("the chart's ConfigMap with the input's value: %v, %v", cm, err)
	}
}

// A ResourceSet's dependsOn is read from the cluster before it expands:
// not met, the unit fails DependencyNotReady naming it, and applies
// nothing; met, it runs.
func TestResourceSetDependsOn(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [rset.yaml]\n")
	writeFile(t, filepath.Join(dir, "rset.yaml"), strings.ReplaceAll(`apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: gated
  namespace: NS
spec:
  dependsOn:
  - apiVersion: v1
    kind: ConfigMap
    name: gate
    namespace: NS
    ready: true
    readyExpr: data.state == 'open'
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: behind-the-gate
      namespace: NS
`, "NS", c.ns))
	o, r := c.apply("--name", "gated", "--path", dir)
	if o.code != exitFail || r.Reason != result.ReasonDependencyNotReady {
		t.Fatalf("exit %d, %s, want 1 DependencyNotReady\n%s", o.code, r.Reason, o.stderr)
	}
	contains(t, "message", r.Message, "ResourceSet/"+c.ns+"/gated (rset.yaml:8): dependency v1/ConfigMap/"+c.ns+"/gate: not found")
	gate := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gate", Namespace: c.ns}, Data: map[string]string{"state": "closed"}}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Create(t.Context(), gate, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if o, r = c.apply("--name", "gated", "--path", dir); o.code != exitFail || !strings.Contains(r.Message, `not ready: readyExpr "data.state == 'open'" is false`) {
		t.Fatalf("closed gate: exit %d, %s: %s", o.code, r.Reason, r.Message)
	}
	gate.Data["state"] = "open"
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Update(t.Context(), gate, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if o, r = c.apply("--name", "gated", "--path", dir); o.code != exitOK {
		t.Fatalf("open gate: exit %d, %s: %s", o.code, r.Reason, r.Message)
	}
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/behind-the-gate": result.Created})
}

// d2-fleet's tenants copy the registry credentials and the runtime info
// from flux-system into each tenant's namespace with the copyFrom
// annotation: the run reads them from the cluster, as the operator does
// when it applies them, and applies the copies; the Secret's values
// appear in no output, and a diff of the same run changes nothing.
func TestResourceSetCopyFrom(t *testing.T) {
	c := newCLI(t)
	tenant := c.ns + "-tenant"
	deleteNamespaces(t, tenant)
	const token = "ghp_copiedTokenValue0123456789abcdef"
	k := cluster.Client(t)
	if _, err := k.CoreV1().Secrets(c.ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ghcr-auth"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{"ghcr.io":{"password":"` + token + `"}}}`)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.CoreV1().ConfigMaps(c.ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "flux-runtime-info"}, Data: map[string]string{"ENVIRONMENT": "staging"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [rset.yaml]\n")
	writeFile(t, filepath.Join(dir, "rset.yaml"), strings.ReplaceAll(`apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: tenants
  namespace: NS
spec:
  inputs:
  - tenant: NS-tenant
  resources:
  - apiVersion: v1
    kind: Namespace
    metadata:
      name: << inputs.tenant >>
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: flux-runtime-info
      namespace: << inputs.tenant >>
      annotations:
        fluxcd.controlplane.io/copyFrom: "NS/flux-runtime-info"
  - apiVersion: v1
    kind: Secret
    metadata:
      name: ghcr-auth
      namespace: << inputs.tenant >>
      annotations:
        fluxcd.controlplane.io/copyFrom: "NS/ghcr-auth"
    type: kubernetes.io/dockerconfigjson
`, "NS", c.ns))
	o, r := c.apply("--name", "tenants", "--path", dir, "--namespace", c.ns)
	if o.code != exitOK || !r.Ready {
		t.Fatalf("exit %d, result %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	cm, err := k.CoreV1().ConfigMaps(tenant).Get(t.Context(), "flux-runtime-info", metav1.GetOptions{})
	if err != nil || cm.Data["ENVIRONMENT"] != "staging" {
		t.Errorf("the copied ConfigMap: %v %v", err, cm)
	}
	s, err := k.CoreV1().Secrets(tenant).Get(t.Context(), "ghcr-auth", metav1.GetOptions{})
	if err != nil || !strings.Contains(string(s.Data[".dockerconfigjson"]), token) {
		t.Errorf("the copied Secret: %v", err)
	}
	applied := o
	o, d := c.diff("--name", "tenants", "--path", dir, "--namespace", c.ns)
	if o.code != exitOK || d.Failed() {
		t.Fatalf("diff: exit %d, %s: %s", o.code, d.Reason, d.Message)
	}
	for _, e := range d.Entries {
		if e.Action != result.Unchanged {
			t.Errorf("the diff after the apply: %s %s", e.Object, e.Action)
		}
	}
	for name, out := range map[string]string{"the apply's stdout": applied.stdout, "the apply's stderr": applied.stderr, "the diff's stdout": o.stdout, "the diff's stderr": o.stderr} {
		if strings.Contains(out, token) {
			t.Errorf("%s holds the copied Secret's value", name)
		}
	}
}

// A Kustomization a ResourceSet generates is named, in its unit's
// messages, at the ResourceSet's line: the generated object is in no
// file.
func TestResourceSetGeneratedUnitIsAtItsResourceSet(t *testing.T) {
	c := newCLI(t)
	repo := t.TempDir()
	w := func(p, content string) { writeFile(t, filepath.Join(repo, p), content) }
	w("clusters/local/sets.yaml", strings.ReplaceAll(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: sets
  namespace: NS
spec:
  interval: 10m
  path: ./sets
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
`, "NS", c.ns))
	w("sets/kustomization.yaml", "resources: [apps.yaml]\n")
	w("sets/apps.yaml", strings.ReplaceAll(`# the tenants' apps
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: apps
  namespace: NS
spec:
  inputs:
  - tenant: a
  resources:
  - apiVersion: kustomize.toolkit.fluxcd.io/v1
    kind: Kustomization
    metadata:
      name: app-<< inputs.tenant >>
      namespace: NS
    spec:
      interval: 10m
      path: ./
      prune: true
      sourceRef:
        kind: OCIRepository
        name: missing
`, "NS", c.ns))
	gitInit(t, repo)
	o := c.run("test", "--config", filepath.Join(repo, "clusters/local"))
	contains(t, "test's output", o.stdout+o.stderr, "Kustomization "+c.ns+"/app-a (sets/apps.yaml:2)")
	if strings.Contains(o.stdout+o.stderr, "apps.yaml:0") {
		t.Errorf("a line 0:\n%s", o.stdout+o.stderr)
	}
}
