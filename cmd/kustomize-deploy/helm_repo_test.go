package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Charts kept in the repository (testdata/repo-charts) deploy with no Flux
// in the cluster: a HelmRelease whose GitRepository is the units' own
// source renders the chart directory it names, with values files of the
// repository; a unit whose path is an umbrella chart renders it as a
// release named as the unit, with its vendored dependency as it is and
// the other fetched at Chart.lock's version. Both go Ready; a re-run
// writes nothing; an edit of the chart is applied.
func TestConfigRendersChartsOfTheRepository(t *testing.T) {
	c := newCLI(t)
	charts := filepath.Join("..", "..", "testdata", "charts")
	repo := helmtest.NewRepository(t,
		helmtest.Chart{Dir: filepath.Join(charts, "ingress"), Version: "4.0.0"},
		helmtest.Chart{Dir: filepath.Join(charts, "ingress"), Version: "4.1.0"})
	dir := gitFixture(t, "repo-charts", "NAMESPACE", c.ns, "REPO_URL", repo.URL)
	copyTree(t, filepath.Join(charts, "web"), filepath.Join(dir, "charts", "web"))
	copyTree(t, filepath.Join(charts, "web"), filepath.Join(dir, "charts", "shop", "charts", "web"))
	commitAll(t, dir, "charts")
	k := cluster.Client(t)
	t.Cleanup(func() {
		_ = k.NetworkingV1().IngressClasses().Delete(context.Background(), "nginx-"+c.ns, metav1.DeleteOptions{})
	})
	config := []string{"--config", filepath.Join(dir, "clusters", "local"), "--chart-cache", t.TempDir()}

	o, s := c.runConfig(append([]string{"apply"}, config...)...)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	for _, name := range []string{"web", "shop"} {
		if r := got[name]; r == nil || r.Reason != result.ReasonApplySucceed || !r.Ready {
			t.Fatalf("unit %s: %+v", name, r)
		}
	}
	contains(t, "apply's progress", o.stderr, "HelmRelease/"+c.ns+"/web: chart web 1.0.0", "from ./charts/web",
		"HelmRelease/"+c.ns+"/shop: chart shop 0.1.0", "from ./charts/shop")
	settings, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "web-settings", metav1.GetOptions{})
	if err != nil || settings.Data["greeting"] != "from-apps-web" {
		t.Errorf("the HelmRelease's ConfigMap, values from apps/web/values.yaml: %v %v", err, settings)
	}
	umbrella, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "shop-umbrella", metav1.GetOptions{})
	if err != nil || umbrella.Data["namespace"] != c.ns {
		t.Errorf("the umbrella chart's own ConfigMap, in the unit's target namespace: %v %v", err, umbrella)
	}
	vendored, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "shop", metav1.GetOptions{})
	if err != nil || *vendored.Spec.Replicas != 2 {
		t.Errorf("the vendored web chart's Deployment, replicas 2 from values-shop.yaml: %v %v", err, vendored)
	}
	if cm, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "shop-settings", metav1.GetOptions{}); err != nil || cm.Data["greeting"] != "from-the-umbrella" {
		t.Errorf("the vendored chart's ConfigMap, values from the umbrella: %v %v", err, cm)
	}
	if _, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "shop-controller", metav1.GetOptions{}); err != nil {
		t.Errorf("the fetched ingress chart's Deployment: %v", err)
	}
	if repo.Requests("ingress-4.0.0.tgz") != 1 || repo.Requests("ingress-4.1.0.tgz") != 0 {
		t.Errorf("ingress downloads: 4.0.0 %d, 4.1.0 %d; want the locked version once", repo.Requests("ingress-4.0.0.tgz"), repo.Requests("ingress-4.1.0.tgz"))
	}

	o, s = c.runConfig(append([]string{"apply"}, config...)...)
	if o.code != exitOK {
		t.Fatalf("re-run: exit %d\n%s", o.code, o.stderr)
	}
	contains(t, "the re-run's progress", o.stderr, "1 release(s)' charts and values are unchanged since the last apply")
	for _, r := range s.Units {
		if r.Changed() || !r.Ready {
			t.Errorf("re-run: %s changed or not ready: %s %s %+v", r.Unit, r.Reason, r.Message, r.Counts)
		}
	}

	// A change to a file of a chart kept in the repository is a change of
	// the release, never taken for the last apply.
	writeFile(t, filepath.Join(dir, "charts", "shop", "templates", "configmap.yaml"),
		readFile(t, filepath.Join(dir, "charts", "shop", "templates", "configmap.yaml"))+"  edited: \"yes\"\n")
	commitAll(t, dir, "edit the umbrella chart")
	o, s = c.runConfig(append([]string{"apply"}, config...)...)
	if r := unitsByName(s)["shop"]; o.code != exitOK || r == nil || r.Counts.Configured != 1 {
		t.Fatalf("apply of an edited chart: exit %d, %+v\n%s", o.code, r, o.stderr)
	}
	if cm, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "shop-umbrella", metav1.GetOptions{}); err != nil || cm.Data["edited"] != "yes" {
		t.Errorf("the umbrella's ConfigMap after its template changed: %v %v", err, cm)
	}
}

// copyTree copies the directory from to to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
