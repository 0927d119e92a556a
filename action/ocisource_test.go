package action

import (
	"encoding/base64"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
)

// A Kustomization whose source is an OCIRepository is pulled from a
// local registry with the credentials of an oci-secrets line
// ($VARIABLE holding a Docker config.json): without it the unit fails
// naming the input, with it the artifact's objects are applied, and the
// password is masked and never shown.
func TestConfigOCISecrets(t *testing.T) {
	const password = "act-oci-pw-3c9b"
	ns := cluster.Namespace(t)
	reg := helmtest.NewRegistryWithAuth(t, "flux", password)
	digest := ocitest.Push(t, reg.Host+"/manifests/app:v1.0.0", ocitest.Flux(t, map[string]string{"deploy/settings.yaml": settingsYAML("pulled-settings", "1")}, "", ""), "flux", password, nil)

	g := newGitRepo(t)
	g.write("deploy/settings.yaml", settingsYAML("wrong-tree", "1"))
	g.write("clusters/test/units.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: app\n  namespace: "+ns+
		"\nspec:\n  interval: 5m\n  url: oci://"+reg.Host+"/manifests/app\n  ref: {semver: \"1.x\"}\n  secretRef: {name: regcred}\n"+
		strings.Replace(kustomization("app", ns, "deploy", ""), "{kind: GitRepository, name: flux-system}", "{kind: OCIRepository, name: app}", 1))
	head := g.commit("units")

	gh := newFakeGitHub(t)
	gh.expect(statusCall)
	e := configRun(t, gh, "push", g, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig)
	if res := e.run(); res.code != exitFail || !strings.Contains(res.stdout, "spec.secretRef names Secret regcred") || !strings.Contains(res.stdout, "oci-secrets") {
		t.Fatalf("without oci-secrets: exit %d\n%s", res.code, res.stdout)
	}

	e.input("oci-secrets", "regcred=$REGCRED")
	e.vars["REGCRED"] = `{"auths": {"` + reg.Host + `": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("flux:"+password)) + `"}}}`
	res := e.run()
	if res.code != exitOK {
		t.Fatalf("with oci-secrets: exit %d\n%s", res.code, res.stdout)
	}
	client := cluster.Client(t)
	if _, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "pulled-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the artifact's ConfigMap: %v", err)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "wrong-tree", metav1.GetOptions{}); err == nil {
		t.Error("this checkout's deploy/ was applied")
	}
	kc, err := kube.New(cluster.Config, "default", kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if inv, err := inventory.Load(t.Context(), kc.Client, ns, "app"); err != nil || inv == nil || inv.Status.LastAppliedRevision != "v1.0.0@"+digest {
		t.Errorf("inventory %v %+v; want the artifact's revision v1.0.0@%s", err, inv, digest)
	}
	if strings.Contains(withoutMaskCommands(res.stdout)+res.summary, password) || !strings.Contains(res.stdout, "::add-mask::"+password) {
		t.Error("the password shows in the log or the summary, or was not masked")
	}

	e.input("oci-secrets", "regcred=$NOT_JSON")
	e.vars["NOT_JSON"] = "flux:" + password
	if res := e.run(); res.code == exitOK || !strings.Contains(res.stdout, "oci-secrets") || strings.Contains(withoutMaskCommands(res.stdout), password) {
		t.Errorf("a bad oci-secrets line: exit %d\n%s", res.code, res.stdout)
	}
}

// resolve-images asks a registry that wants credentials with those of the
// oci-secrets line the pod's imagePullSecrets name: the Deployment is
// applied pinned to the digest; with the wrong password the unit fails
// saying the registry refused, and the password shows nowhere.
func TestConfigResolveImagesWithOCISecrets(t *testing.T) {
	const password = "act-pull-pw-7d1e"
	ns := cluster.Namespace(t)
	reg := helmtest.NewRegistryWithAuth(t, "robot", password)
	digest := ocitest.Push(t, reg.Host+"/shop/web:1.4", ocitest.Flux(t, map[string]string{"a": "b"}, "", ""), "robot", password, nil)
	g := newGitRepo(t)
	g.write("deploy/web.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n"+
		"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      imagePullSecrets: [{name: regcred}]\n      containers: [{name: web, image: '"+reg.Host+"/shop/web:1.4'}]\n")
	g.write("clusters/test/units.yaml", kustomization("web", ns, "deploy", ""))
	g.write("clusters/test/flux-system/gotk-sync.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n")
	head := g.commit("units")
	creds := func(pw string) string {
		return `{"auths": {"` + reg.Host + `": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("robot:"+pw)) + `"}}}`
	}

	gh := newFakeGitHub(t)
	gh.expect(statusCall)
	e := configRun(t, gh, "push", g, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig).
		input("resolve-images", "true").input("oci-secrets", "regcred=$REGCRED")
	e.vars["REGCRED"] = creds("wrong-" + password)
	res := e.run()
	if res.code != exitFail || !strings.Contains(res.stdout, "container web: resolving image "+reg.Host+"/shop/web:1.4") || !strings.Contains(res.stdout, "were refused") {
		t.Errorf("with the wrong password: exit %d\n%s", res.code, res.stdout)
	}
	if strings.Contains(withoutMaskCommands(res.stdout)+res.summary, password) {
		t.Error("the password shows in the log or the summary")
	}

	e.vars["REGCRED"] = creds(password)
	if res = e.run(); res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	live, err := cluster.Client(t).AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || live.Spec.Template.Spec.Containers[0].Image != reg.Host+"/shop/web:1.4@"+digest {
		t.Fatalf("the live image: %v %v", err, live)
	}
	if strings.Contains(withoutMaskCommands(res.stdout)+res.summary, password) {
		t.Error("the password shows in the log or the summary")
	}
}
