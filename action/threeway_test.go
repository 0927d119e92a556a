package action

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

const sizedSettingsYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  color: blue
  size: %s
`

// A pull request's diff against the cluster tells the PR's own change
// apart from what was changed in the cluster since the last apply: a
// reviewer sees that merging also puts back a value someone set by hand.
func TestPullRequestDiffIsThreeWay(t *testing.T) {
	ns := cluster.Namespace(t)
	gh := newFakeGitHub(t)
	// One comment, created by the first PR run, edited by the second.
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, commentOn(7))
	gh.expectTimes(1, editCommentCall)
	g := newGitRepo(t)
	g.write("deploy/web/deployment.yaml", deploymentYAML("1"))
	g.write("deploy/web/settings.yaml", strings.Replace(sizedSettingsYAML, "%s", "small", 1))
	base := g.commit("web, small")
	withUnit := func(e *runEnv) *runEnv {
		return e.input("path", "deploy/web").input("name", "web").input("target-namespace", ns).
			input("inventory-namespace", ns).input("kubeconfig", cluster.Kubeconfig).input("wait", "false")
	}
	if res := withUnit(newRun(t, gh, "push", g.dir, map[string]string{pushed: base})).run(); res.code != exitOK {
		t.Fatalf("applying the base: %s", res.stdout)
	}

	// By hand, in the cluster: another color, three replicas.
	client := cluster.Client(t)
	cm, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "red"
	if _, err := client.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AppsV1().Deployments(ns).Patch(t.Context(), "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "kubectl-scale"}); err != nil {
		t.Fatal(err)
	}

	// The PR changes the size only.
	g.write("deploy/web/settings.yaml", strings.Replace(sizedSettingsYAML, "%s", "large", 1))
	head := g.commit("web, large")
	res := withUnit(newRun(t, gh, "pull_request.opened", g.dir, map[string]string{prOpened: head, prBase: base})).run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}

	var r result.Result
	if err := json.Unmarshal([]byte(res.outputs["result"]), &r); err != nil {
		t.Fatalf("output result: %v", err)
	}
	if r.Base != base || r.AppliedRevision != base {
		t.Errorf("base %q, applied revision %q; want both %s", r.Base, r.AppliedRevision, base)
	}
	drift := map[string]result.FieldDrift{}
	for _, e := range r.Entries {
		for _, d := range e.Drift {
			drift[e.Object.Kind+" "+d.Field] = d
		}
		if e.Diff != "" || e.Change != "" {
			t.Errorf("%s: the result output carries a diff (they belong in diff-file)", e.Object)
		}
	}
	// The diff file has the PR's own change apart: the ConfigMap's size,
	// not the colour someone changed in the cluster, nor the Deployment.
	own, _, _ := strings.Cut(res.diff, "\nchanged in the cluster since")
	_, own, _ = strings.Cut(own, "changes against ")
	if !strings.Contains(own, "+  size: large") || strings.Contains(own, "red") || strings.Contains(own, "kind: Deployment") {
		t.Errorf("the PR's own changes in the diff file:\n%s", own)
	}
	want := map[string]result.FieldDrift{
		"ConfigMap data.color":     {Field: "data.color", Live: "red", Applied: "blue", Merged: "blue", Reverted: true},
		"Deployment spec.replicas": {Field: "spec.replicas", Live: "3", Applied: "1", Merged: "1", Reverted: true},
	}
	for k, w := range want {
		if drift[k] != w {
			t.Errorf("drift %s = %+v, want %+v", k, drift[k], w)
		}
	}
	if len(drift) != len(want) {
		t.Errorf("drift %+v, want only %v", drift, want)
	}

	bodies := gh.commentBodies()
	if len(bodies) != 1 {
		t.Fatalf("%d comments", len(bodies))
	}
	for _, s := range []string{"Merging reverts live changes", "`data.color`: live `red`, Git `blue`",
		"`spec.replicas`: live `3`, Git `1`", "What this PR changes", "+  size: large"} {
		if !strings.Contains(bodies[0], s) {
			t.Errorf("comment lacks %q:\n%s", s, bodies[0])
		}
	}
	// Nothing was written: the hand-made change is still there.
	if cm, _ := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{}); cm.Data["color"] != "red" || cm.Data["size"] != "small" {
		t.Errorf("a PR run changed the cluster: %v", cm.Data)
	}

	// Without the base commit in the checkout (a shallow clone), the diff
	// is still right, and says what it could not do.
	res = withUnit(newRun(t, gh, "pull_request.synchronize", g.dir, map[string]string{prSynchronize: head, prBase: "9999999999999999999999999999999999999999"})).run()
	if res.code != exitOK {
		t.Fatalf("without the base: exit %d\n%s", res.code, res.stdout)
	}
	body := gh.commentBodies()[0]
	for _, s := range []string{"no three-way diff", "fetch-depth: 0", "+  size: large", "-  color: red"} {
		if !strings.Contains(body, s) {
			t.Errorf("comment without the base lacks %q:\n%s", s, body)
		}
	}
}
