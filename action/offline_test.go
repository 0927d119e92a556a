package action

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

func TestForkedPullRequestGetsAnOfflineDiff(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, commentOn(8))
	e := newRun(t, gh, "pull_request.fork", repo.dir, map[string]string{"3333333333333333333333333333333333333333": repo.head, prBase: repo.base})
	res := e.input("path", "deploy/web").run() // no kubeconfig: no cluster access
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if !strings.Contains(res.stdout, "no cluster access") {
		t.Errorf("the log does not say the diff is offline:\n%s", res.stdout)
	}
	// The sides are two commits, not the cluster.
	for _, want := range []string{"-  replicas: 1", "+  replicas: 2", "ConfigMap/web-settings", "(base)\n+++ ", "(head)\n"} {
		if !strings.Contains(res.summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.summary)
		}
	}
	if strings.Contains(res.summary, "(live)") {
		t.Errorf("an offline diff calls a side live:\n%s", res.summary)
	}
	bodies := gh.commentBodies()
	if len(bodies) != 1 || !strings.Contains(bodies[0], marker("unit=deploy-web", "")) {
		t.Errorf("comments %q", bodies)
	}
	if res.outputs["changed"] != "true" {
		t.Errorf("outputs %v", res.outputs)
	}
}

func TestOfflineDiffExplainsAMissingBaseCommit(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.expect(statusCall, commentOn(8)) // the failure, reported on the PR too
	e := newRun(t, gh, "pull_request.fork", repo.dir, map[string]string{"3333333333333333333333333333333333333333": repo.head, prBase: "9999999999999999999999999999999999999999"})
	res := e.input("path", "deploy/web").run()
	if res.code != exitFail {
		t.Fatalf("exit %d, want failure\n%s", res.code, res.stdout)
	}
	if !strings.Contains(res.stdout, "fetch-depth: 0") {
		t.Errorf("the error does not say how to fix it:\n%s", res.stdout)
	}
}

// A fork's PR has no secrets: the offline diff decrypts nothing. Before,
// every unit with a SOPS file failed ("no matching age identity") and its
// dependents were skipped. Encrypted values show masked; a re-encrypted
// value shows as a changed key; an unchanged one does not show at all.
func TestForkedPullRequestWithSOPSNeedsNoKey(t *testing.T) {
	key, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	secret := func(password string) []byte {
		enc, err := sopstest.Encrypt(key.Recipient, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "+password+"\n"), formats.Yaml, sopstest.K8sSecretRegex)
		if err != nil {
			t.Fatal(err)
		}
		return enc
	}
	envFile, err := sopstest.Encrypt(key.Recipient, []byte("API_TOKEN="+dbPassword+"-env\n"), formats.Dotenv, "")
	if err != nil {
		t.Fatal(err)
	}
	g := newGitRepo(t)
	g.write("deploy/web/deployment.yaml", deploymentYAML("1"))
	g.write("deploy/web/db.enc.yaml", string(secret(dbPassword)))
	g.write("deploy/web/api.enc.env", string(envFile))
	g.write("deploy/web/kustomization.yaml", "resources: [deployment.yaml, db.enc.yaml]\nsecretGenerator:\n- name: api\n  envs: [api.enc.env]\n  options: {disableNameSuffixHash: true}\n")
	base := g.commit("db secret")
	g.write("deploy/web/db.enc.yaml", string(secret(dbPassword+"-rotated")))
	g.write("deploy/web/deployment.yaml", deploymentYAML("2"))
	head := g.commit("rotate the db password, 2 replicas")

	for name, ageKey := range map[string]string{"no key": "", "with a key": key.Identity} {
		t.Run(name, func(t *testing.T) {
			gh := newFakeGitHub(t)
			gh.expect(statusCall, commentOn(8)) // the comment the leak check reads
			res := newRun(t, gh, "pull_request.fork", g.dir, map[string]string{forkHead: head, prBase: base}).
				input("path", "deploy/web").input("sops-age-key", ageKey).run()
			if res.code != exitOK {
				t.Fatalf("exit %d\n%s", res.code, res.stdout)
			}
			for _, want := range []string{"-  password: '*** (before)'", "+  password: '*** (after)'", "+  replicas: 2"} {
				if !strings.Contains(res.summary, want) {
					t.Errorf("summary lacks %q:\n%s", want, res.summary)
				}
			}
			var result struct {
				Entries []struct {
					Object struct{ Kind, Name string }
					Action string
				}
			}
			if err := json.Unmarshal([]byte(res.outputs["result"]), &result); err != nil {
				t.Fatal(err)
			}
			for _, e := range result.Entries {
				if e.Object.Name == "api" && e.Action != "unchanged" {
					t.Errorf("the untouched encrypted env Secret is %s", e.Action)
				}
			}
			all := res.stdout + res.summary + res.diff + strings.Join(gh.commentBodies(), "\n")
			for _, leak := range []string{dbPassword, "ENC[AES256_GCM", "sops_mac", "no matching age identity"} {
				if strings.Contains(all, leak) {
					t.Errorf("output shows %q", leak)
				}
			}
		})
	}
}

// A fork's pull request that bumps a HelmRelease's chart gets, offline,
// the rendered objects that change: the chart is rendered at the base and
// at the head, and the Deployment's new image shows, not only the
// HelmRelease's version field.
func TestForkedPullRequestDiffsAChartBump(t *testing.T) {
	charts := helmtest.NewRepository(t,
		helmtest.Chart{Dir: filepath.Join("..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"},
		helmtest.Chart{Dir: filepath.Join("..", "testdata", "charts", "web"), Version: "1.1.0", AppVersion: "1.1"})
	g := newGitRepo(t)
	unit := func(version string) {
		g.write("deploy/web/repository.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: web}\nspec:\n  interval: 1h\n  url: "+charts.URL+"\n")
		g.write("deploy/web/release.yaml", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: web}\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: web\n      version: \""+version+"\"\n      sourceRef: {kind: HelmRepository, name: charts}\n")
	}
	unit("1.0.0")
	base := g.commit("web 1.0.0")
	unit("1.1.0")
	head := g.commit("web 1.1.0")

	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, commentOn(8))
	res := newRun(t, gh, "pull_request.fork", g.dir, map[string]string{"3333333333333333333333333333333333333333": head, prBase: base}).
		input("path", "deploy/web").input("chart-cache", ".charts").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	for _, want := range []string{"Deployment/web/web", "-      - image: registry.example/web:1.0", "+      - image: registry.example/web:1.1", "+    helm.sh/chart: web-1.1.0"} {
		if !strings.Contains(res.summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.summary)
		}
	}
	if strings.Contains(res.summary, "`HelmRelease/web/web`") {
		t.Errorf("the HelmRelease itself is listed as an object to apply:\n%s", res.summary)
	}
	if !strings.Contains(res.summary, "release HelmRelease/web/web: chart web 1.1.0") {
		t.Errorf("the summary does not name the release and its chart:\n%s", res.summary)
	}
}

// A fork's pull request of a Flux configuration with custom resources
// gets a green offline diff: ClusterIssuer is validated against the CRD
// another unit holds, and ServiceMonitor and HelmRelease (applied as
// they are for helm-controller), of no schema anywhere, are noted as not
// validated on their objects. Given the schema-dir input, a typo'd field
// of the ServiceMonitor fails the unit, naming it.
func TestForkedPullRequestOfCustomResources(t *testing.T) {
	g := newGitRepo(t)
	g.write("deploy/cert-manager/crd.yaml", clusterIssuerCRD)
	g.write("deploy/configs/clusterissuer.yaml", "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: selfsigned\nspec:\n  selfSigned: {}\n")
	g.write("clusters/test/units.yaml", kustomization("cert-manager", "infra", "deploy/cert-manager", "")+
		kustomization("configs", "infra", "deploy/configs", "  dependsOn: [{name: cert-manager}]\n"))
	base := g.commit("cert-manager and its issuer")
	g.write("deploy/configs/clusterissuer.yaml", "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: selfsigned\nspec:\n  ca: {secretName: root}\n")
	serviceMonitor := func(interval string) string {
		return "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  endpoints:\n    - port: http\n      " + interval + ": 30s\n"
	}
	g.write("deploy/configs/servicemonitor.yaml", serviceMonitor("interval"))
	g.write("deploy/configs/release.yaml", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: podinfo\n      sourceRef: {kind: HelmRepository, name: podinfo}\n")
	head := g.commit("a CA issuer, a ServiceMonitor and a HelmRelease")

	gh := newFakeGitHub(t)
	gh.expect(statusCall, commentOn(8))
	res := configRun(t, gh, "pull_request.fork", g, map[string]string{forkHead: head, prBase: base}, "infra").input("helm-controller", "true").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	bodies := gh.commentBodies()
	if len(bodies) != 1 {
		t.Fatalf("comments %q", bodies)
	}
	for _, s := range []string{
		"ServiceMonitor/infra/web</code> (deploy/configs/servicemonitor.yaml): not validated: no schema for ServiceMonitor.monitoring.coreos.com",
		"HelmRelease/infra/podinfo</code> (deploy/configs/release.yaml): not validated: no schema for HelmRelease.helm.toolkit.fluxcd.io",
		"**Note:** not validated: no schema for ServiceMonitor.monitoring.coreos.com (1 object(s))",
		"+    secretName: root",
	} {
		if !strings.Contains(bodies[0], s) {
			t.Errorf("comment lacks %q:\n%s", s, bodies[0])
		}
	}
	if strings.Contains(bodies[0], "ClusterIssuer/selfsigned</code> (deploy/configs/clusterissuer.yaml): not validated") {
		t.Errorf("the ClusterIssuer, whose CRD another unit holds, was not validated:\n%s", bodies[0])
	}
	if last := gh.lastStatusOf("kustomize-deploy/configs"); last["state"] != "success" {
		t.Errorf("status of configs: %v", last)
	}

	g.write("schemas/monitoring.coreos.com/servicemonitor_v1.json", readFile(t, filepath.Join("..", "internal", "validate", "testdata", "schemas", "monitoring.coreos.com", "servicemonitor_v1.json")))
	g.write("deploy/configs/servicemonitor.yaml", serviceMonitor("intervall"))
	typo := g.commit("a typo, and the schemas that catch it")
	gh = newFakeGitHub(t)
	gh.expect(statusCall, commentOn(8))
	res = configRun(t, gh, "pull_request.fork", g, map[string]string{forkHead: typo, prBase: base}, "infra").
		input("helm-controller", "true").input("schema-dir", "schemas").run()
	if res.code != exitFail || !strings.Contains(res.outputs["result"], "ServiceMonitor/infra/web (deploy/configs/servicemonitor.yaml): spec.endpoints[0].intervall: unknown field") {
		t.Errorf("with schema-dir: exit %d, result %s\n%s", res.code, res.outputs["result"], res.stdout)
	}
}

// clusterIssuerCRD is cert-manager's ClusterIssuer CRD, cut down.
const clusterIssuerCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterissuers.cert-manager.io
spec:
  group: cert-manager.io
  names: {kind: ClusterIssuer, plural: clusterissuers, singular: clusterissuer}
  scope: Cluster
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                selfSigned: {type: object}
                ca:
                  type: object
                  required: [secretName]
                  properties:
                    secretName: {type: string}
`

// A fork's pull request renders its charts with the kube-version input
// and the API versions of the unit's CRDs in .Capabilities: there is no
// cluster to ask.
func TestForkedPullRequestChartsSeeTheKubeVersionInput(t *testing.T) {
	charts := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "testdata", "charts", "caps"), Version: "0.1.0"})
	g := newGitRepo(t)
	g.write("README.md", "deployments\n")
	base := g.commit("no unit yet")
	g.write("deploy/caps/release.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: caps}\nspec:\n  interval: 1h\n  url: "+charts.URL+
		"\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: caps, namespace: caps}\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: caps\n      version: \"0.1.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n")
	g.write("deploy/caps/crd.yaml", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.charts.example.com}\nspec:\n  group: charts.example.com\n"+
		"  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n")
	head := g.commit("caps")

	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, commentOn(8))
	res := newRun(t, gh, "pull_request.fork", g.dir, map[string]string{"3333333333333333333333333333333333333333": head, prBase: base}).
		input("path", "deploy/caps").input("chart-cache", ".charts").input("kube-version", "v1.29.4").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	for _, want := range []string{"ConfigMap/caps/caps-caps", "+  kubeVersion: v1.29.4", "+  api: legacy", `+  widgetKind: "true"`, `+  clusterIssuers: "false"`} {
		if !strings.Contains(res.summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.summary)
		}
	}
}
