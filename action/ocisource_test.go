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
