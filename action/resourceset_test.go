package action

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A ResourceSet's GitHubPullRequest provider lists the repository's open
// pull requests with the job's token (input github-token), against the
// job's GitHub API: each gets what the ResourceSet generates for it.
func TestResourceSetPullRequestsWithTheJobsToken(t *testing.T) {
	ns := cluster.Namespace(t)
	gh := newFakeGitHub(t)
	gh.expectTimes(2, statusCall)
	gh.expect("GET /repos/acme/deployments/pulls")
	gh.open = []openPR{{number: 12, headRepo: "acme/deployments", branch: "feat/preview", sha: "abc0000000000000000000000000000000000012"}}
	g := newGitRepo(t)
	g.write("deploy/previews/kustomization.yaml", "resources: [previews.yaml]\n")
	g.write("deploy/previews/previews.yaml", strings.ReplaceAll(`apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSetInputProvider
metadata:
  name: pull-requests
  namespace: NS
spec:
  type: GitHubPullRequest
  url: https://github.com/acme/deployments
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: previews
  namespace: NS
spec:
  inputsFrom:
  - name: pull-requests
  resourcesTemplate: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: preview-<< inputs.id >>
      namespace: NS
    data:
      branch: << inputs.branch | quote >>
      sha: << inputs.sha | quote >>
`, "NS", ns))
	head := g.commit("previews")
	res := newRun(t, gh, "push", g.dir, map[string]string{pushed: head}).
		input("path", "deploy/previews").input("name", "previews").input("inventory-namespace", ns).input("kubeconfig", cluster.Kubeconfig).run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "preview-12", metav1.GetOptions{})
	if err != nil || cm.Data["branch"] != "feat/preview" || cm.Data["sha"] != "abc0000000000000000000000000000000000012" {
		t.Fatalf("preview ConfigMap %v, %v", cm, err)
	}
	for i, r := range gh.requests {
		if strings.HasPrefix(r, "GET /repos/acme/deployments/pulls") && !strings.Contains(gh.auth[i], "ghs_testtoken0123456789") {
			t.Errorf("%s without the job's token: %q", r, gh.auth[i])
		}
	}
	if strings.Contains(withoutMaskCommands(res.stdout), "ghs_testtoken0123456789") {
		t.Error("the token appears in the log")
	}
	if !strings.Contains(res.stdout, "ResourceSet/"+ns+"/previews: 1 input set(s), 1 object(s) generated") {
		t.Errorf("the log does not say what the ResourceSet generated:\n%s", res.stdout)
	}
}

// A ResourceSet's GitHubPullRequest provider reads the open pull
// requests through the fake GitHub with the job's token: a pull request
// opened gets its preview namespace on push; once closed, the next push
// collects it as the operator does, although Namespaces are a protected
// kind by default: the ResourceSet that generated it is still in the
// build and asked for its removal. A generated Namespace whose
// ResourceSet left the build stays protected.
func TestConfigPreviewEnvironmentPerPullRequest(t *testing.T) {
	ns := cluster.Namespace(t)
	preview := ns + "-pr-12"
	client := cluster.Client(t)
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), preview, metav1.DeleteOptions{})
		_ = client.CoreV1().Namespaces().Delete(context.Background(), ns+"-pr-13", metav1.DeleteOptions{})
	})
	g := newGitRepo(t)
	g.write("deploy/previews/previews.yaml", strings.ReplaceAll(`apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSetInputProvider
metadata: {name: prs, namespace: NS}
spec: {type: GitHubPullRequest, url: "https://github.com/acme/deployments"}
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: previews, namespace: NS}
spec:
  inputsFrom: [{name: prs}]
  resourcesTemplate: |
    apiVersion: v1
    kind: Namespace
    metadata:
      name: NS-pr-<< inputs.id >>
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: preview
      namespace: NS-pr-<< inputs.id >>
    data: {sha: << inputs.sha | quote >>, branch: << inputs.branch | quote >>}
`, "NS", ns))
	g.write("clusters/test/units.yaml", strings.Replace(kustomization("previews", ns, "deploy/previews", ""), "  targetNamespace: "+ns+"\n", "", 1))
	head := g.commit("previews")

	gh := newFakeGitHub(t)
	gh.open = []openPR{{number: 12, headRepo: "acme/deployments", branch: "feat/button", sha: "1234abcd"}}
	res := configRun(t, gh, "push", g, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig).run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	got, err := client.CoreV1().ConfigMaps(preview).Get(t.Context(), "preview", metav1.GetOptions{})
	if err != nil || got.Data["sha"] != "1234abcd" || got.Data["branch"] != "feat/button" {
		t.Fatalf("the preview of pull request 12: %v %v", err, got)
	}
	if !strings.Contains(strings.Join(gh.auth, "\n"), "ghs_testtoken0123456789") {
		t.Errorf("GitHub was not asked with the job's token: %q", gh.auth)
	}

	// Closed: the next push collects its preview, Namespace and all.
	gh.mu.Lock()
	gh.open = []openPR{{number: 13, headRepo: "acme/deployments", branch: "feat/menu", sha: "5678abcd"}}
	gh.mu.Unlock()
	if res = configRun(t, gh, "push", g, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig).run(); res.code != exitOK {
		t.Fatalf("the push after pull request 12 closed: exit %d\n%s", res.code, res.stdout)
	}
	if n, err := client.CoreV1().Namespaces().Get(t.Context(), preview, metav1.GetOptions{}); err == nil && n.DeletionTimestamp == nil {
		t.Errorf("the preview of the closed pull request is still there")
	}
	if _, err := client.CoreV1().ConfigMaps(ns+"-pr-13").Get(t.Context(), "preview", metav1.GetOptions{}); err != nil {
		t.Errorf("the preview of the open pull request 13: %v", err)
	}

	// The ResourceSet leaves the build: what it generated is a plain
	// prune of the unit now, and its Namespace is protected.
	g.write("deploy/previews/previews.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: left, namespace: "+ns+"}\n")
	gone := g.commit("no previews")
	res = configRun(t, gh, "push", g, map[string]string{pushed: gone}, ns).input("kubeconfig", cluster.Kubeconfig).run()
	if res.code == exitOK || !strings.Contains(res.outputs["result"], "refusing to prune") || !strings.Contains(res.stdout, "Namespace/"+ns+"-pr-13") {
		t.Fatalf("the push without the ResourceSet: exit %d, want the prune of Namespace/%s-pr-13 refused\n%s", res.code, ns, res.stdout)
	}
	if _, err := client.CoreV1().ConfigMaps(ns+"-pr-13").Get(t.Context(), "preview", metav1.GetOptions{}); err != nil {
		t.Errorf("the refused push deleted the preview of pull request 13: %v", err)
	}
}
