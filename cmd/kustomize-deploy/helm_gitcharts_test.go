package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A HelmRelease whose chart is ./charts/web of another repository (a
// GitRepository served in the test) renders from that repository's tree
// at its spec.ref, fetched as a Kustomization's source is, with values
// files of that repository, and applies; with --fetch-sources=false the
// unit fails naming the GitRepository and how to map it, and applies
// nothing.
func TestConfigRendersChartOfAnotherRepository(t *testing.T) {
	c := newCLI(t)
	srv := gittest.NewServer(t)
	charts := srv.Repo("charts")
	files := map[string]string{"charts/web/values-prod.yaml": "greeting: from-the-charts-repository\n"}
	web := filepath.Join("..", "..", "testdata", "charts", "web")
	err := filepath.WalkDir(web, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(web, p)
		files["charts/web/"+filepath.ToSlash(rel)] = readFile(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	head := charts.Commit("web chart", files)

	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "clusters/local/units.yaml"), `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: charts
  namespace: `+c.ns+`
spec:
  interval: 5m
  url: `+charts.URL+`
  ref:
    branch: master
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: web
  namespace: `+c.ns+`
spec:
  interval: 10m
  sourceRef:
    kind: GitRepository
    name: flux-system
  path: ./apps/web
  prune: true
  wait: true
  timeout: 2m
`)
	writeFile(t, filepath.Join(repo, "apps/web/kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- release.yaml\n")
	writeFile(t, filepath.Join(repo, "apps/web/release.yaml"), `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
  namespace: `+c.ns+`
spec:
  interval: 10m
  chart:
    spec:
      chart: ./charts/web
      sourceRef:
        kind: GitRepository
        name: charts
      valuesFiles:
      - ./charts/web/values.yaml
      - ./charts/web/values-prod.yaml
`)
	initRepo(t, repo, "git@github.com:acme/fleet.git")
	config := []string{"--config", filepath.Join(repo, "clusters", "local"), "--chart-cache", t.TempDir()}
	k := cluster.Client(t)

	// Not fetched when told so: the unit fails, naming the GitRepository
	// and how to map it, and nothing is applied.
	o, s := c.runConfig(append([]string{"apply", "--fetch-sources=false"}, config...)...)
	r := unitsByName(s)["web"]
	if o.code != exitFail || r == nil || r.Ready || len(r.Entries) != 0 {
		t.Fatalf("--fetch-sources=false: exit %d %+v\n%s\n%s", o.code, r, o.stdout, o.stderr)
	}
	contains(t, "its message", r.Message, "spec.chart.spec.sourceRef GitRepository/"+c.ns+"/charts",
		"GitRepository "+c.ns+"/charts (clusters/local/units.yaml:1) is another repository", "fetching sources is off")
	contains(t, "its hint", o.stderr, "hint: --fetch-sources", "--source KIND/NAMESPACE/NAME=DIR")
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "web-settings", metav1.GetOptions{}); err == nil {
		t.Errorf("the release's ConfigMap was applied by the failed unit")
	}

	// Fetched: rendered from the other repository's tree, its values
	// files read there.
	o, s = c.runConfig(append([]string{"apply"}, config...)...)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if r := unitsByName(s)["web"]; r == nil || r.Reason != result.ReasonApplySucceed || !r.Ready {
		t.Fatalf("unit web: %+v", r)
	}
	contains(t, "apply's progress", o.stderr, "HelmRelease/"+c.ns+"/web: chart web 1.0.0",
		"from ./charts/web of GitRepository/"+c.ns+"/charts at master@sha1:"+head)
	settings, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "web-settings", metav1.GetOptions{})
	if err != nil || settings.Data["greeting"] != "from-the-charts-repository" {
		t.Errorf("the HelmRelease's ConfigMap, values from the charts repository's values-prod.yaml: %v %v", err, settings)
	}
	if strings.Contains(o.stderr, "not supported") {
		t.Errorf("apply's progress refuses something:\n%s", o.stderr)
	}
}
