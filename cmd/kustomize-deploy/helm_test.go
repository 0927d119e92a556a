package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// chartUnit writes a unit holding a HelmRepository and a HelmRelease of
// the web chart at version, with spec.values values, in namespace ns.
func chartUnit(t *testing.T, dir, ns, repoURL, version, values string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+ns+
		"\nspec:\n  interval: 1h\n  url: "+repoURL+"\n")
	writeFile(t, filepath.Join(dir, "release.yaml"), "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: "+ns+
		"\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: web\n      version: \""+version+"\"\n      sourceRef: {kind: HelmRepository, name: charts}\n  values:\n"+values)
}

// A HelmRelease deploys its chart with no Flux in the cluster: rendered
// here, its objects applied, re-applied without change, diffed when its
// values or its chart's version change, and pruned when it leaves Git.
func TestHelmReleaseDeploysWithoutFlux(t *testing.T) {
	c := newCLI(t)
	repo := helmtest.NewRepository(t,
		helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"},
		helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.1.0", AppVersion: "1.1"})
	dir := t.TempDir()
	chartUnit(t, dir, c.ns, repo.URL, "1.0.0", "    greeting: hello\n")
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir()}

	o, r := c.apply(args...)
	if o.code != exitOK {
		t.Fatalf("apply: exit %d: %s %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "apply's progress", o.stderr, "HelmRelease/"+c.ns+"/web: chart web 1.0.0", "is read, not applied")
	var kinds []string
	for _, e := range r.Entries {
		kinds = append(kinds, e.Object.Kind)
		if e.Source != filepath.Join(dir, "release.yaml") && !strings.HasSuffix(e.Source, "release.yaml") {
			t.Errorf("%s comes from %q, want the HelmRelease's file", e.Object, e.Source)
		}
	}
	if strings.Join(kinds, ",") != "ConfigMap,Service,Deployment" || r.Counts.Created != 3 {
		t.Fatalf("entries %v, counts %+v", kinds, r.Counts)
	}
	client := cluster.Client(t)
	dep, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != "registry.example/web:1.0" {
		t.Fatalf("the chart's Deployment: %v %v", err, dep)
	}

	if o, r := c.apply(args...); o.code != exitOK || r.Counts.Unchanged != 3 || r.Changed() {
		t.Errorf("a second apply: exit %d, counts %+v", o.code, r.Counts)
	}

	chartUnit(t, dir, c.ns, repo.URL, "1.0.0", "    greeting: hola\n")
	o = c.run(append([]string{"diff"}, args...)...)
	contains(t, "diff of a values change", o.stdout, "-  greeting: hello\n+  greeting: hola", "checksum/settings")

	chartUnit(t, dir, c.ns, repo.URL, "1.x", "    greeting: hello\n")
	o = c.run(append([]string{"diff", "-o", "json"}, args...)...)
	var bump result.Result
	if err := json.Unmarshal([]byte(o.stdout), &bump); err != nil {
		t.Fatalf("diff -o json: %v\n%s", err, o.stderr)
	}
	var depDiff string
	for _, e := range bump.Entries {
		if e.Object.Kind == "Deployment" {
			depDiff = e.Diff
		}
	}
	contains(t, "the Deployment's diff of a chart bump", depDiff, "-      - image: registry.example/web:1.0\n+      - image: registry.example/web:1.1", "+    helm.sh/chart: web-1.1.0")

	if err := os.Remove(filepath.Join(dir, "release.yaml")); err != nil {
		t.Fatal(err)
	}
	if o, r := c.apply(args...); o.code != exitOK || r.Counts.Deleted != 3 {
		t.Fatalf("apply without the HelmRelease: exit %d, counts %+v\n%s", o.code, r.Counts, o.stderr)
	}
	if _, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's Deployment after its HelmRelease left: %v", err)
	}
}

// A HelmRelease that cannot be rendered fails its unit, naming the
// release and the cause, and nothing of the unit is written; with
// --helm-controller, HelmReleases are applied as they are, as before.
func TestHelmReleaseThatDoesNotRenderWritesNothing(t *testing.T) {
	c := newCLI(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {a: b}\n")
	chartUnit(t, dir, c.ns, repo.URL, "2.x", "    greeting: hello\n")
	args := []string{"--name", "web", "--path", dir, "-n", c.ns}

	o, r := c.apply(args...)
	if o.code != exitFail || r.Reason != result.ReasonBuildFailed {
		t.Fatalf("exit %d, %s %s", o.code, r.Reason, r.Message)
	}
	contains(t, "the failure", r.Message, "HelmRelease "+c.ns+"/web", "release.yaml", `no version of chart web matching "2.x" (it has 1.0.0)`)
	client := cluster.Client(t)
	if _, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "plain", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unit's ConfigMap was written although its HelmRelease failed: %v", err)
	}

	chartUnit(t, dir, c.ns, repo.URL, "1.0.0", "    greeting: hello\n")
	o, r = c.apply(append(args, "--helm-controller")...)
	if o.code != exitFail || !strings.Contains(r.Message+o.stderr, "HelmRelease") {
		t.Errorf("--helm-controller on a cluster without Flux's CRDs: exit %d, %s %s", o.code, r.Reason, r.Message)
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "web")
	if err != nil || inv == nil {
		t.Fatalf("inventory %v %v", inv, err)
	}
	for _, e := range inv.Entries {
		if e.ID.Kind == "Deployment" {
			t.Errorf("--helm-controller rendered the chart: %v", e.ID)
		}
	}
}
