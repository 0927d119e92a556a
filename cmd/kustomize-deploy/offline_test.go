package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// diff --offline on a laptop gives what a pull request without cluster
// access gets from the Action: the working tree's rendered manifests
// against a commit's, for one unit or a whole configuration, with no
// cluster at all (the kubeconfig named does not exist).
func TestDiffOfflineAgainstABase(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, "shop")
	writeFile(t, filepath.Join(repo, "apps", "frontend", "configmap.yaml"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: frontend\ndata:\n  page: home.html\n")
	noCluster := []string{"--kubeconfig", filepath.Join(t.TempDir(), "none")}

	o := c.runAsIs(append([]string{"diff", "--config", filepath.Join(repo, "clusters", "local"), "--base", "HEAD", "--offline", "-o", "json"}, noCluster...)...)
	set := decodeSet(t, o)
	if o.code != exitOK || !set.Ready {
		t.Fatalf("diff --config --offline: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	byName := unitsByName(set)
	front := byName["webapp-frontend"]
	if front == nil || front.Reason != result.ReasonOfflineDiffSucceed || front.Counts.Configured != 1 {
		t.Fatalf("webapp-frontend: %+v", front)
	}
	if d := front.Entries[0].Diff; !strings.Contains(d, "-  page: index.html\n+  page: home.html") {
		t.Errorf("frontend diff:\n%s", d)
	}
	for name, r := range byName {
		if name != "webapp-frontend" && r.Changed() {
			t.Errorf("unit %s changed offline although only the frontend did: %+v", name, r.Counts)
		}
	}

	o = c.runAsIs(append([]string{"diff", "--name", "frontend", "--path", filepath.Join(repo, "apps", "frontend"), "--base", "HEAD", "--offline"}, noCluster...)...)
	if o.code != exitOK || !strings.Contains(o.stdout, "+  page: home.html") {
		t.Errorf("diff --path --offline: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}

	o = c.runAsIs(append([]string{"diff", "--name", "frontend", "--path", filepath.Join(repo, "apps", "frontend"), "--offline"}, noCluster...)...)
	if o.code != exitUsage || !strings.Contains(o.stderr, "--offline needs --base") {
		t.Errorf("--offline without --base: exit %d\n%s", o.code, o.stderr)
	}
}

// decodeSet decodes a --config command's JSON output.
func decodeSet(t *testing.T, o outcome) *result.Set {
	t.Helper()
	var s result.Set
	if err := json.Unmarshal([]byte(o.stdout), &s); err != nil {
		t.Fatalf("no JSON set (exit %d): %v\nstdout:\n%s\nstderr:\n%s", o.code, err, o.stdout, o.stderr)
	}
	return &s
}

// crsRepo copies testdata/flux-crs into a git repository of its own,
// its HelmRepository serving the widgets chart from a local repository,
// and returns its path.
func crsRepo(t *testing.T) string {
	t.Helper()
	charts := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "widgets"), Version: "0.1.0"})
	dir := fixture(t, "flux-crs")
	repository := filepath.Join(dir, "infrastructure", "widgets", "repository.yaml")
	data, err := os.ReadFile(repository)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, repository, strings.ReplaceAll(string(data), "CHARTS_URL", charts.URL))
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "infrastructure"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// The offline diff of a pull request (here a working tree against HEAD)
// validates custom resources against the CRDs of every unit of the
// configuration, those the charts render included, then a schema
// directory; a kind with no schema anywhere is noted on its object, and
// the unit stays green. Before, every unit with a ClusterIssuer,
// ServiceMonitor or HelmRelease failed: unknown kind.
func TestDiffOfflineOfCustomResources(t *testing.T) {
	c := newCLI(t)
	repo := crsRepo(t)
	configs := filepath.Join(repo, "infrastructure", "configs")
	writeFile(t, filepath.Join(configs, "widget.yaml"), // the PR's change
		"apiVersion: charts.example.com/v1\nkind: Widget\nmetadata:\n  name: big\n  namespace: widgets\nspec:\n  size: huge\n")
	diff := func(args ...string) (outcome, *result.Set) {
		t.Helper()
		o := c.runAsIs(append([]string{"diff", "--config", filepath.Join(repo, "clusters", "prod"), "--base", "HEAD", "--offline", "-o", "json",
			"--chart-cache", t.TempDir(), "--kubeconfig", filepath.Join(t.TempDir(), "none")}, args...)...)
		return o, decodeSet(t, o)
	}
	reasons := func(r *result.Result) map[string]string {
		m := map[string]string{}
		for _, e := range r.Entries {
			m[e.Object.Kind] = e.Reason
		}
		return m
	}
	const noServiceMonitor = "not validated: no schema for ServiceMonitor.monitoring.coreos.com"

	// ClusterIssuer gets its schema from the cert-manager unit's CRD,
	// Widget from the CRD of the chart the widgets unit renders;
	// ServiceMonitor has none.
	o, set := diff()
	cfgs := unitsByName(set)["configs"]
	if o.code != exitOK || !set.Ready || cfgs == nil || cfgs.Reason != result.ReasonOfflineDiffSucceed || cfgs.Counts.Configured != 1 {
		t.Fatalf("diff: exit %d, configs %+v\n%s", o.code, cfgs, o.stderr)
	}
	if diff := cmp.Diff(map[string]string{"ClusterIssuer": "", "ServiceMonitor": noServiceMonitor, "Widget": ""}, reasons(cfgs)); diff != "" {
		t.Errorf("configs' entries (-want +got):\n%s", diff)
	}
	if len(cfgs.Notes) != 1 || !strings.HasPrefix(cfgs.Notes[0], noServiceMonitor+" (1 object(s)): neither Kubernetes v1.37.2 nor a CustomResourceDefinition of the configuration defines it") {
		t.Errorf("configs' notes: %q", cfgs.Notes)
	}
	text := c.runAsIs("diff", "--config", filepath.Join(repo, "clusters", "prod"), "--base", "HEAD", "--offline", "--chart-cache", t.TempDir(), "--kubeconfig", filepath.Join(t.TempDir(), "none"))
	contains(t, "the text diff", text.stdout, "ServiceMonitor/widgets/web  infrastructure/configs/servicemonitor.yaml  ("+noServiceMonitor+")", "note: "+noServiceMonitor)

	// With the cluster's helm-controller rendering charts, the
	// HelmRelease and its HelmRepository are objects with no schema, and
	// so is the Widget, whose CRD the chart would bring (every unit
	// rendered: the change reaches configs only).
	o, set = diff("--helm-controller", "--all-units")
	if o.code != exitOK || !set.Ready {
		t.Fatalf("diff --helm-controller: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if got := reasons(unitsByName(set)["widgets"]); got["HelmRelease"] != "not validated: no schema for HelmRelease.helm.toolkit.fluxcd.io" ||
		got["HelmRepository"] != "not validated: no schema for HelmRepository.source.toolkit.fluxcd.io" {
		t.Errorf("widgets' entries with --helm-controller: %q", got)
	}
	if got := reasons(unitsByName(set)["configs"]); got["Widget"] != "not validated: no schema for Widget.charts.example.com" || got["ClusterIssuer"] != "" {
		t.Errorf("configs' entries with --helm-controller: %q", got)
	}

	// A schema directory in the CRDs catalog's layout gives ServiceMonitor
	// its schema: no note.
	schemas := filepath.Join(repo, "schemas")
	if o, set = diff("--schema-dir", schemas); o.code != exitOK || !set.Ready {
		t.Fatalf("diff --schema-dir: exit %d\n%s", o.code, o.stderr)
	}
	if cfgs := unitsByName(set)["configs"]; reasons(cfgs)["ServiceMonitor"] != "" || len(cfgs.Notes) != 0 {
		t.Errorf("with a schema for it, ServiceMonitor is still noted: %q %q", reasons(cfgs), cfgs.Notes)
	}
}

// A typo'd field of a custom resource fails the offline diff, naming the
// object, its file and the field, whether its schema comes from a CRD of
// another unit, a chart's CRD or the schema directory; without a schema,
// it is only noted.
func TestDiffOfflineCatchesTyposInCustomResources(t *testing.T) {
	c := newCLI(t)
	repo := crsRepo(t)
	configs := filepath.Join(repo, "infrastructure", "configs")
	writeFile(t, filepath.Join(configs, "clusterissuer.yaml"), "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: selfsigned\nspec:\n  selfSinged: {}\n")
	writeFile(t, filepath.Join(configs, "widget.yaml"), "apiVersion: charts.example.com/v1\nkind: Widget\nmetadata:\n  name: big\n  namespace: widgets\nspec:\n  sise: big\n")
	writeFile(t, filepath.Join(configs, "servicemonitor.yaml"), "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: web\n  namespace: widgets\nspec:\n  selector:\n    matchLabels: {app: web}\n  endpoints:\n    - port: http\n      intervall: 30s\n")
	diff := func(args ...string) (outcome, *result.Result) {
		t.Helper()
		o := c.runAsIs(append([]string{"diff", "--config", filepath.Join(repo, "clusters", "prod"), "--base", "HEAD", "--offline", "-o", "json",
			"--chart-cache", t.TempDir(), "--kubeconfig", filepath.Join(t.TempDir(), "none")}, args...)...)
		return o, unitsByName(decodeSet(t, o))["configs"]
	}

	o, cfgs := diff()
	if o.code != exitFail || cfgs == nil || cfgs.Reason != result.ReasonValidationFailed {
		t.Fatalf("diff: exit %d, configs %+v", o.code, cfgs)
	}
	contains(t, "configs' failure", cfgs.Message,
		"ClusterIssuer/selfsigned (infrastructure/configs/clusterissuer.yaml): spec.selfSinged: unknown field",
		"Widget/widgets/big (infrastructure/configs/widget.yaml): spec.sise: unknown field")
	if strings.Contains(cfgs.Message, "ServiceMonitor") {
		t.Errorf("the ServiceMonitor, with no schema, failed:\n%s", cfgs.Message)
	}

	o, cfgs = diff("--schema-dir", filepath.Join(repo, "schemas"))
	if o.code != exitFail || cfgs == nil {
		t.Fatalf("diff --schema-dir: exit %d", o.code)
	}
	contains(t, "configs' failure with --schema-dir", cfgs.Message,
		"ServiceMonitor/widgets/web (infrastructure/configs/servicemonitor.yaml): spec.endpoints[0].intervall: unknown field")

	o = c.runAsIs("diff", "--config", filepath.Join(repo, "clusters", "prod"), "--offline", "--base", "HEAD", "--schema-dir", filepath.Join(repo, "missing"))
	if o.code != exitUsage || !strings.Contains(o.stderr, "--schema-dir: ") {
		t.Errorf("a missing --schema-dir: exit %d\n%s", o.code, o.stderr)
	}
}

// Without a cluster, charts see the Kubernetes version of --kube-version
// and the API versions of the configuration's CRDs (a plain CRD of one
// unit, a chart's crds/ of another) in .Capabilities: the offline diff
// of a pull request renders them as the cluster will.
func TestDiffOfflineChartsSeeTheConfigurationsCapabilities(t *testing.T) {
	c := newCLI(t)
	repo := crsRepo(t)
	charts := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "caps"), Version: "0.1.0"})
	unit := filepath.Join(repo, "infrastructure", "caps")
	writeFile(t, filepath.Join(unit, "release.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: caps\nspec:\n  interval: 1h\n  url: "+charts.URL+
		"\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: caps\n  namespace: caps\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: caps\n      version: \"0.1.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n  values:\n    lookupConfigMap: colours\n")
	cfg := filepath.Join(repo, "clusters", "prod", "infrastructure.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfg, string(data)+"---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: caps\n  namespace: flux-system\nspec:\n  interval: 10m\n"+
		"  sourceRef: {kind: GitRepository, name: flux-system}\n  path: ./infrastructure/caps\n  prune: true\n")
	diff := func(args ...string) map[string]string {
		t.Helper()
		o := c.runAsIs(append([]string{"diff", "--config", filepath.Join(repo, "clusters", "prod"), "--base", "HEAD", "--offline", "-o", "json",
			"--chart-cache", t.TempDir(), "--kubeconfig", filepath.Join(t.TempDir(), "none")}, args...)...)
		set := decodeSet(t, o)
		caps := unitsByName(set)["caps"]
		if o.code != exitOK || caps == nil || caps.Counts.Created != 1 {
			t.Fatalf("diff %q: exit %d, caps %+v\n%s", args, o.code, caps, o.stderr)
		}
		got := map[string]string{}
		for _, line := range strings.Split(caps.Entries[0].Diff, "\n") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(line, "+  "), ": "); ok && strings.HasPrefix(line, "+  ") && !strings.HasPrefix(line, "+   ") {
				got[k] = v
			}
		}
		delete(got, "name")
		delete(got, "namespace")
		return got
	}
	want := map[string]string{"kubeVersion": `v1.29.4`, "api": "legacy", "widgets": `"true"`, "widgetKind": `"true"`, "clusterIssuers": `"true"`, "looked-up": "none"}
	if diff := cmp.Diff(want, diff("--kube-version", "v1.29.4")); diff != "" {
		t.Errorf("the ConfigMap rendered offline with --kube-version (-want +got):\n%s", diff)
	}
	if got := diff("--kube-version", "1.37"); got["kubeVersion"] != "v1.37" || got["api"] != "modern" {
		t.Errorf("the ConfigMap rendered offline with --kube-version 1.37: %q", got)
	}
	o := c.runAsIs("diff", "--config", filepath.Join(repo, "clusters", "prod"), "--base", "HEAD", "--offline", "--kube-version", "latest")
	if o.code != exitUsage || !strings.Contains(o.stderr, "--kube-version: want a Kubernetes version") {
		t.Errorf("a bad --kube-version: exit %d\n%s", o.code, o.stderr)
	}
}

// A Kustomization annotated kustomize-deploy.dev/helm-controller: "true"
// leaves its HelmReleases to the cluster's helm-controller: they and their
// sources are objects of the unit, applied as they are, while the other
// units' charts are still rendered here.
func TestHelmControllerPerUnit(t *testing.T) {
	c := newCLI(t)
	repo := crsRepo(t)
	cfg := filepath.Join(repo, "clusters", "prod", "infrastructure.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	annotated := strings.Replace(string(data), "  name: widgets\n  namespace: flux-system\n", "  name: widgets\n  namespace: flux-system\n  annotations:\n    kustomize-deploy.dev/helm-controller: \"true\"\n", 1)
	if annotated == string(data) {
		t.Fatal("the widgets Kustomization was not annotated")
	}
	writeFile(t, cfg, annotated)
	o := c.runAsIs("diff", "--config", filepath.Join(repo, "clusters", "prod"), "--base", "HEAD", "--offline", "-o", "json",
		"--chart-cache", t.TempDir(), "--kubeconfig", filepath.Join(t.TempDir(), "none"))
	set := decodeSet(t, o)
	if o.code != exitOK || !set.Ready {
		t.Fatalf("diff: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	var kinds []string
	for _, e := range unitsByName(set)["widgets"].Entries {
		kinds = append(kinds, e.Object.Kind)
	}
	slices.Sort(kinds)
	if !slices.Equal(kinds, []string{"HelmRelease", "HelmRepository"}) {
		t.Errorf("the annotated unit's objects: %q, want its HelmRelease and HelmRepository as they are", kinds)
	}
	if r := unitsByName(set)["widgets"]; len(r.Releases) != 0 {
		t.Errorf("the annotated unit rendered releases: %+v", r.Releases)
	}

	writeFile(t, cfg, strings.Replace(annotated, `helm-controller: "true"`, `helm-controller: "yes"`, 1))
	o = c.runAsIs("diff", "--config", filepath.Join(repo, "clusters", "prod"), "--base", "HEAD", "--offline")
	if o.code == exitOK || !strings.Contains(o.stderr, `metadata.annotations[kustomize-deploy.dev/helm-controller]: want "true" or "false", got "yes"`) {
		t.Errorf("a bad annotation: exit %d\n%s", o.code, o.stderr)
	}
}
