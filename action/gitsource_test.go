package action

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
)

// A Kustomization whose GitRepository is another repository is fetched
// from a local Git server with the credentials of a git-secrets line
// ($VARIABLE): without it the unit fails naming the input, with it the
// fetched tree is applied, and the token is masked and never shown. With
// fetch-sources false the unit fails as an unreachable source.
func TestConfigGitSecrets(t *testing.T) {
	const token = "act-git-token-5e1d"
	ns := cluster.Namespace(t)
	srv := gittest.NewServer(t)
	other := srv.Repo("other")
	other.Commit("one", map[string]string{"deploy/settings.yaml": settingsYAML("fetched-settings", "1")})
	srv.RequireAuth("other", "git", token)

	g := newGitRepo(t)
	g.write("deploy/settings.yaml", settingsYAML("wrong-tree", "1"))
	g.write("clusters/test/units.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: other\n  namespace: "+ns+
		"\nspec:\n  interval: 5m\n  url: "+other.URL+"\n  secretRef: {name: other-auth}\n"+
		strings.Replace(kustomization("other", ns, "deploy", ""), "name: flux-system", "name: other", 1))
	head := g.commit("units")

	gh := newFakeGitHub(t)
	gh.expect(statusCall)
	e := configRun(t, gh, "push", g, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig)
	if res := e.run(); res.code != exitFail || !strings.Contains(res.stdout, "spec.secretRef names Secret other-auth") || !strings.Contains(res.stdout, "git-secrets") {
		t.Fatalf("without git-secrets: exit %d\n%s", res.code, res.stdout)
	}

	e.input("git-secrets", "other-auth=$OTHER_GIT")
	e.vars["OTHER_GIT"] = "username=git\npassword=" + token + "\n"
	res := e.run()
	if res.code != exitOK {
		t.Fatalf("with git-secrets: exit %d\n%s", res.code, res.stdout)
	}
	client := cluster.Client(t)
	if _, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "fetched-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the fetched tree's ConfigMap: %v", err)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "wrong-tree", metav1.GetOptions{}); err == nil {
		t.Error("this checkout's deploy/ was applied")
	}
	if strings.Contains(withoutMaskCommands(res.stdout)+res.summary, token) || !strings.Contains(res.stdout, "::add-mask::"+token) {
		t.Error("the token shows in the log or the summary, or was not masked")
	}

	e.input("fetch-sources", "false")
	if res := e.run(); res.code != exitFail || !strings.Contains(res.stdout, "ArtifactFailed") {
		t.Errorf("fetch-sources false: exit %d\n%s", res.code, res.stdout)
	}
	e.input("fetch-sources", "maybe")
	if res := e.run(); res.code != exitFail || !strings.Contains(res.stdout, "input 'fetch-sources'") {
		t.Errorf("fetch-sources maybe: exit %d\n%s", res.code, res.stdout)
	}
}
