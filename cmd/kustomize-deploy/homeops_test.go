package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// homeOpsGroups and homeOpsApps shape the home-ops layout the test
// writes: groups of apps, one HelmRelease each.
const homeOpsGroups, homeOpsApps = 2, 10

// A repository laid out as home-ops repositories are (onedr0p's,
// bjw-s's): a root Kustomization (kubernetes/flux/cluster/ks.yaml) builds
// kubernetes/apps, whose groups list each app's ks.yaml: a Kustomization
// with postBuild.substitute, a shared component and a dependsOn on its
// group's first app, building the app's HelmRelease. Every chart source
// (an HTTP HelmRepository, an OCI HelmRepository, an OCIRepository) is in
// kubernetes/flux/repositories, a Kustomization of its own. From a
// cluster with no Flux, all 20 releases render from their sources,
// served on 127.0.0.1, and deploy, each unit rendered once; a second
// apply changes nothing in the cluster: no object gets a new
// resourceVersion.
func TestConfigHomeOpsLayoutDeploysEveryRelease(t *testing.T) {
	c := newCLI(t)
	web := filepath.Join("..", "..", "testdata", "charts", "web")
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: web, Version: "1.0.0", AppVersion: "1.0"})
	reg := helmtest.NewRegistry(t)
	reg.Push("charts", helmtest.Chart{Dir: web, Version: "1.1.0", AppVersion: "1.1"})
	dir := t.TempDir()
	writeHomeOps(t, dir, c.ns, repo.URL, reg.Host)
	initRepo(t, dir, "git@github.com:acme/home-ops.git")
	requests := filepath.Join(t.TempDir(), "requests.json")
	c.env[countRequestsEnv] = requests
	config := []string{"--config", filepath.Join(dir, "kubernetes", "flux", "cluster"), "--chart-cache", t.TempDir()}

	o, s := c.runConfig(append([]string{"apply"}, config...)...)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	units := unitsByName(s)
	wantUnits := 2 + homeOpsGroups*homeOpsApps // the root, the repositories, the apps
	if len(units) != wantUnits {
		t.Errorf("%d units, want %d", len(units), wantUnits)
	}
	k := cluster.Client(t)
	versions := map[string]string{}
	for g := range homeOpsGroups {
		for a := range homeOpsApps {
			app := homeOpsApp(g, a)
			if r := units[app]; r == nil || r.Reason != result.ReasonApplySucceed {
				t.Errorf("unit %s: %+v", app, r)
				continue
			}
			contains(t, "apply's progress", o.stderr, "HelmRelease/"+c.ns+"/"+app+": chart web "+homeOpsVersions[a%len(homeOpsVersions)])
			cm, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), app+"-settings", metav1.GetOptions{})
			if err != nil {
				t.Errorf("release %s: %v", app, err)
				continue
			}
			// Substituted by the app's Kustomization.
			if cm.Data["greeting"] != "hello from "+app {
				t.Errorf("release %s: greeting %q", app, cm.Data["greeting"])
			}
			versions["ConfigMap/"+cm.Name] = cm.ResourceVersion
			d, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), app, metav1.GetOptions{})
			if err != nil {
				t.Errorf("release %s: %v", app, err)
				continue
			}
			// Patched in by the shared component.
			if got := d.Spec.Template.Labels["home-ops/group"]; got != fmt.Sprintf("g%d", g) {
				t.Errorf("release %s: pods labelled %v", app, d.Spec.Template.Labels)
			}
			versions["Deployment/"+d.Name] = d.ResourceVersion
		}
	}
	if r := units["cluster-repositories"]; r == nil || r.Reason != result.ReasonApplySucceed || len(r.Entries) != 0 {
		t.Errorf("unit cluster-repositories applied something (sources are read, not applied): %+v", r)
	}
	if s.Renders != wantUnits || len(s.RenderedTwice) > 0 {
		t.Errorf("%d renderings of %d units, rendered twice: %v; want each rendered once", s.Renders, wantUnits, s.RenderedTwice)
	}

	o, s = c.runConfig(append([]string{"apply"}, config...)...)
	if o.code != exitOK || !s.Ready || s.Changed() {
		t.Fatalf("a second apply: exit %d, ready %t, changed %t\n%s", o.code, s.Ready, s.Changed(), o.stderr)
	}
	for id, rv := range versions {
		kind, name, _ := strings.Cut(id, "/")
		var now string
		if kind == "ConfigMap" {
			cm, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			now = cm.ResourceVersion
		} else {
			d, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			now = d.ResourceVersion
		}
		if now != rv {
			t.Errorf("%s: resourceVersion %s after the second apply, %s before", id, now, rv)
		}
	}
	data, err := os.ReadFile(requests)
	if err != nil {
		t.Fatal(err)
	}
	var count kube.RequestCount
	if err := json.Unmarshal(data, &count); err != nil {
		t.Fatal(err)
	}
	for method, n := range count.ByMethod {
		if method != "GET" && !strings.HasSuffix(method, " dryRun") {
			t.Errorf("the second apply sent %d %s request(s): %+v", n, method, count)
		}
	}
	if s.Renders > wantUnits {
		t.Errorf("the second apply rendered %d times for %d units", s.Renders, wantUnits)
	}
}

// homeOpsVersions are the chart versions the apps' sources resolve to, by
// app (round robin): the HTTP repository's 1.x, the OCI repository's
// 1.1.0, the OCIRepository's newest.
var homeOpsVersions = []string{"1.0.0", "1.1.0", "1.1.0"}

func homeOpsApp(g, a int) string { return fmt.Sprintf("g%d-app%02d", g, a) }

// writeHomeOps writes the home-ops layout below dir, every object in
// namespace ns, the charts from the HTTP repository at repoURL and the
// OCI registry at registry.
func writeHomeOps(t *testing.T, dir, ns, repoURL, registry string) {
	t.Helper()
	ks := func(name, path, extra string) string {
		return fmt.Sprintf("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  interval: 1h\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  path: %s\n  prune: true\n%s", name, ns, path, extra)
	}
	kustomization := func(resources ...string) string {
		return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + strings.Join(resources, "\n- ") + "\n"
	}
	files := map[string]string{
		"kubernetes/flux/cluster/ks.yaml": ks("cluster-repositories", "./kubernetes/flux/repositories", "") + "---\n" +
			ks("cluster-apps", "./kubernetes/apps", "  dependsOn:\n  - name: cluster-repositories\n"),
		"kubernetes/flux/repositories/kustomization.yaml":      kustomization("helm", "oci"),
		"kubernetes/flux/repositories/helm/kustomization.yaml": kustomization("charts.yaml", "oci-charts.yaml"),
		"kubernetes/flux/repositories/helm/charts.yaml":        fmt.Sprintf("apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: %s\nspec:\n  interval: 1h\n  url: %s\n", ns, repoURL),
		"kubernetes/flux/repositories/helm/oci-charts.yaml":    fmt.Sprintf("apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: oci-charts\n  namespace: %s\nspec:\n  interval: 1h\n  type: oci\n  insecure: true\n  url: oci://%s/charts\n", ns, registry),
		"kubernetes/flux/repositories/oci/kustomization.yaml":  kustomization("web.yaml"),
		"kubernetes/flux/repositories/oci/web.yaml":            fmt.Sprintf("apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: web\n  namespace: %s\nspec:\n  interval: 1h\n  insecure: true\n  url: oci://%s/charts/web\n  ref:\n    semver: \">=1.0.0\"\n", ns, registry),
		// The shared component labels every app's pods with its group.
		"kubernetes/components/common/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- target: {kind: HelmRelease}\n  patch: |\n    - op: add\n      path: /spec/values/podLabels\n      value:\n        home-ops/group: \"${GROUP}\"\n",
	}
	charts := []string{
		"  chart:\n    spec:\n      chart: web\n      version: \"1.x\"\n      sourceRef: {kind: HelmRepository, name: charts}\n",
		"  chart:\n    spec:\n      chart: web\n      version: \"1.1.0\"\n      sourceRef: {kind: HelmRepository, name: oci-charts}\n",
		"  chartRef: {kind: OCIRepository, name: web}\n",
	}
	var groups []string
	for g := range homeOpsGroups {
		group := fmt.Sprintf("g%d", g)
		groups = append(groups, group)
		var apps []string
		for a := range homeOpsApps {
			app := homeOpsApp(g, a)
			apps = append(apps, app+"/ks.yaml")
			var depends string
			if a > 0 {
				depends = "  dependsOn:\n  - name: " + homeOpsApp(g, 0) + "\n"
			}
			files["kubernetes/apps/"+group+"/"+app+"/ks.yaml"] = ks(app, "./kubernetes/apps/"+group+"/"+app+"/app",
				depends+"  wait: true\n  targetNamespace: "+ns+"\n  components:\n  - ../../../../components/common\n  postBuild:\n    substitute:\n      APP: "+app+"\n      GROUP: "+group+"\n")
			files["kubernetes/apps/"+group+"/"+app+"/app/kustomization.yaml"] = kustomization("helmrelease.yaml")
			files["kubernetes/apps/"+group+"/"+app+"/app/helmrelease.yaml"] = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: ${APP}\nspec:\n  interval: 1h\n" +
				charts[a%len(charts)] + "  values:\n    greeting: hello from ${APP}\n"
		}
		files["kubernetes/apps/"+group+"/kustomization.yaml"] = kustomization(apps...)
	}
	files["kubernetes/apps/kustomization.yaml"] = kustomization(groups...)
	for name, text := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), text)
	}
}
