package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// The layout Flux's docs and home-ops repositories use: every chart
// source (an HTTP HelmRepository, an OCI HelmRepository, an
// OCIRepository) in flux/repositories, a Kustomization of its own, and
// the HelmReleases in per-app units reached by building apps/: every
// release renders from its source, declared in another unit, and
// deploys; the sources are read, not applied; a second apply writes
// nothing.
func TestConfigChartSourcesInAnotherUnit(t *testing.T) {
	c := newCLI(t)
	web := filepath.Join("..", "..", "testdata", "charts", "web")
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: web, Version: "1.0.0", AppVersion: "1.0"})
	reg := helmtest.NewRegistry(t)
	reg.Push("charts", helmtest.Chart{Dir: web, Version: "1.1.0", AppVersion: "1.1"})

	dir := t.TempDir()
	ks := func(name, path string) string {
		return fmt.Sprintf("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  interval: 10m\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  path: %s\n  prune: true\n", name, c.ns, path)
	}
	writeFile(t, filepath.Join(dir, "clusters/local/flux.yaml"), ks("repositories", "./flux/repositories")+"---\n"+ks("apps", "./apps"))
	writeFile(t, filepath.Join(dir, "flux/repositories/kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- helm.yaml\n- oci.yaml\n")
	writeFile(t, filepath.Join(dir, "flux/repositories/helm.yaml"), fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: charts
  namespace: %[1]s
spec:
  interval: 1h
  url: %[2]s
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: oci-charts
  namespace: %[1]s
spec:
  interval: 1h
  type: oci
  insecure: true
  url: oci://%[3]s/charts
`, c.ns, repo.URL, reg.Host))
	writeFile(t, filepath.Join(dir, "flux/repositories/oci.yaml"), fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: web
  namespace: %s
spec:
  interval: 1h
  insecure: true
  url: oci://%s/charts/web
  ref:
    semver: ">=1.0.0"
`, c.ns, reg.Host))
	apps := map[string]string{
		"http":     "  chart:\n    spec:\n      chart: web\n      version: \"1.x\"\n      sourceRef: {kind: HelmRepository, name: charts}\n",
		"oci-repo": "  chart:\n    spec:\n      chart: web\n      version: \"1.1.0\"\n      sourceRef: {kind: HelmRepository, name: oci-charts}\n",
		"chartref": "  chartRef: {kind: OCIRepository, name: web}\n",
	}
	var resources []string
	for name, spec := range apps {
		resources = append(resources, "- "+name+".yaml")
		writeFile(t, filepath.Join(dir, "apps", name+".yaml"), ks("app-"+name, "./apps/"+name+"/app"))
		writeFile(t, filepath.Join(dir, "apps", name, "app/kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- release.yaml\n")
		writeFile(t, filepath.Join(dir, "apps", name, "app/release.yaml"), fmt.Sprintf("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  interval: 10m\n%s", name, c.ns, spec))
	}
	writeFile(t, filepath.Join(dir, "apps/kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"+strings.Join(resources, "\n")+"\n")
	initRepo(t, dir, "git@github.com:acme/fleet.git")
	config := []string{"--config", filepath.Join(dir, "clusters", "local"), "--chart-cache", t.TempDir()}

	o, s := c.runConfig(append([]string{"apply"}, config...)...)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	units := unitsByName(s)
	k := cluster.Client(t)
	for name, version := range map[string]string{"http": "1.0.0", "oci-repo": "1.1.0", "chartref": "1.1.0"} {
		if r := units["app-"+name]; r == nil || r.Reason != result.ReasonApplySucceed {
			t.Errorf("unit app-%s: %+v", name, r)
		}
		contains(t, "apply's progress", o.stderr, "HelmRelease/"+c.ns+"/"+name+": chart web "+version)
		if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), name+"-settings", metav1.GetOptions{}); err != nil {
			t.Errorf("release %s: %v", name, err)
		}
	}
	if r := units["repositories"]; r == nil || r.Reason != result.ReasonApplySucceed || len(r.Entries) != 0 {
		t.Errorf("unit repositories applied something (sources are read, not applied): %+v", r)
	}

	o, s = c.runConfig(append([]string{"apply"}, config...)...)
	if o.code != exitOK || s.Changed() {
		t.Errorf("a second apply: exit %d, changed %v\n%s", o.code, s.Changed(), o.stderr)
	}
}
