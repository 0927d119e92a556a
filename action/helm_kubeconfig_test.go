package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// A HelmRelease's spec.kubeConfig Secret maps to a kubeconfig given in
// the input kubeconfig-secrets, as a Kustomization's does: without it
// the unit fails naming the input, the HelmRelease and its line; with it
// the chart is applied through that kubeconfig (here the same cluster,
// under the Secret's name), and the unit's inventory records its objects
// as that cluster's.
func TestConfigKubeconfigSecretsOfAHelmRelease(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	g := newGitRepo(t)
	g.write("deploy/apps/repository.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+ns+"\nspec:\n  interval: 1h\n  url: "+repo.URL+"\n")
	g.write("deploy/apps/release.yaml", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: "+ns+
		"\nspec:\n  interval: 10m\n  kubeConfig:\n    secretRef: {name: spoke}\n  chart:\n    spec:\n      chart: web\n      version: \"1.0.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n")
	g.write("clusters/test/units.yaml", kustomization("apps", ns, "deploy/apps", ""))
	head := g.commit("a release on another cluster")
	kubeconfig, err := os.ReadFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	e := configRun(t, gh, "push", g, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig).input("chart-cache", ".charts")
	res := e.run()
	if res.code != exitFail || !strings.Contains(res.stdout, "HelmRelease "+ns+"/web (deploy/apps/release.yaml:1): spec.kubeConfig names Secret spoke: give its kubeconfig in the input 'kubeconfig-secrets'") {
		t.Fatalf("without the input: exit %d\n%s", res.code, res.stdout)
	}

	e.input("kubeconfig-secrets", "spoke=$SPOKE_KUBECONFIG")
	e.vars["SPOKE_KUBECONFIG"] = string(kubeconfig)
	if res = e.run(); res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if _, err := cluster.Client(t).AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil {
		t.Errorf("the chart's Deployment: %v", err)
	}
	kc, err := kube.New(cluster.Config, "default", kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(t.Context(), kc.Client, ns, "apps")
	if err != nil || inv == nil {
		t.Fatalf("the unit's inventory: %v", err)
	}
	for _, en := range inv.Entries {
		if en.Cluster != "spoke" {
			t.Errorf("%s recorded on cluster %q, want spoke", en.ID, en.Cluster)
		}
	}
	if strings.Contains(res.stdout, "client-key-data") || strings.Contains(res.stdout, "client-certificate-data") {
		t.Errorf("the kubeconfig shows in the log:\n%s", res.stdout)
	}
}
