package action

import (
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
	g.write("deploy/previews/previews.yaml", strings.NewReplacer("NS", ns, "GITHUB", gh.srv.URL).Replace(`apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSetInputProvider
metadata:
  name: pull-requests
  namespace: NS
spec:
  type: GitHubPullRequest
  url: GITHUB/acme/deployments
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
`))
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
