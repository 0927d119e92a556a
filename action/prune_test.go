package action

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The prune budget on GitHub: a PR whose merge would prune a protected
// kind fails its status with the list unless it carries the label; the
// push refuses the same prune (nothing applied) unless the PR that
// merged it had the label.
func TestPruneBudgetGate(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	// The PR's comment, created then edited once labelled; the pushes
	// look up the labels of the pull request that merged their commit.
	gh.onlyExpectedWrites()
	gh.expect(statusCall, mergedPullsCall)
	gh.expectTimes(1, commentOn(7))
	gh.expectTimes(1, editCommentCall)
	if res := repo.run(t, gh, "push", ns).input("protect", "ConfigMap").run(); res.code != exitOK {
		t.Fatalf("first push: exit %d\n%s", res.code, res.stdout)
	}
	repo.git("rm", "-q", "deploy/web/settings.yaml")
	repo.write("deploy/web/deployment.yaml", deploymentYAML("3"))
	repo.head = repo.commit("settings leave Git")
	cm := "ConfigMap/" + ns + "/web-settings"

	res := repo.run(t, gh, "pull_request.opened", ns).input("protect", "ConfigMap").run()
	st := gh.lastStatusOf("kustomize-deploy/web")
	if res.code == exitOK || st["state"] != "failure" || !strings.Contains(st["description"].(string), "PruneFailed") {
		t.Errorf("unlabelled PR: exit %d, status %v", res.code, st)
	}
	if bodies := gh.commentBodies(); len(bodies) != 1 || !strings.Contains(bodies[0], cm) || !strings.Contains(bodies[0], "⚠️ **prune**") {
		t.Errorf("the comment does not show the refused prune:\n%s", strings.Join(bodies, "\n---\n"))
	}
	if !strings.Contains(res.stdout, `label the pull request "allow-prune"`) {
		t.Errorf("no notice naming the label:\n%s", res.stdout)
	}

	res = repo.run(t, gh, "pull_request.labeled", ns).input("protect", "ConfigMap").run()
	if st := gh.lastStatusOf("kustomize-deploy/web"); res.code != exitOK || st["state"] != "success" {
		t.Errorf("labelled PR: exit %d, status %v\n%s", res.code, st, res.stdout)
	}

	res = repo.run(t, gh, "push", ns).input("protect", "ConfigMap").run()
	if res.code == exitOK || !strings.Contains(res.outputs["result"], "refusing to prune 1 object(s)") {
		t.Errorf("push of an unlabelled merge: exit %d, result %s", res.code, res.outputs["result"])
	}
	client := cluster.Client(t)
	if _, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "web-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the refused push deleted the ConfigMap: %v", err)
	}
	if d, _ := client.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{}); *d.Spec.Replicas != 2 {
		t.Errorf("the refused push applied the Deployment: %d replicas", *d.Spec.Replicas)
	}

	gh.merged[repo.head] = []string{"infra", "allow-prune"}
	res = repo.run(t, gh, "push", ns).input("protect", "ConfigMap").run()
	if res.code != exitOK {
		t.Fatalf("push of a labelled merge: exit %d\n%s", res.code, res.stdout)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "web-settings", metav1.GetOptions{}); err == nil {
		t.Error("the labelled merge did not prune the ConfigMap")
	}
}
