package action

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

const (
	prOpened      = "1111111111111111111111111111111111111111"
	prSynchronize = "2222222222222222222222222222222222222222"
	prBase        = "0000000000000000000000000000000000000000"
	pushed        = "4444444444444444444444444444444444444444"
	dbPassword    = "action-plaintext-db-pass-51x"
)

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-settings
data:
  replicas: "%s"
`

func deploymentYAML(replicas string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ` + replicas + `
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example/web:1
`
}

// unitRepo is a repository with one unit, deploy/web, at two commits.
type unitRepo struct {
	*gitRepo
	base, head string
}

func newUnitRepo(t *testing.T) *unitRepo {
	g := newGitRepo(t)
	g.write("deploy/web/deployment.yaml", deploymentYAML("1"))
	base := g.commit("web at 1 replica")
	g.write("deploy/web/deployment.yaml", deploymentYAML("2"))
	g.write("deploy/web/settings.yaml", strings.Replace(configMap, "%s", "2", 1))
	head := g.commit("web at 2 replicas")
	return &unitRepo{gitRepo: g, base: base, head: head}
}

func (u *unitRepo) run(t *testing.T, gh *fakeGitHub, event, ns string) *runEnv {
	e := newRun(t, gh, event, u.dir, map[string]string{prOpened: u.head, prSynchronize: u.head, prBase: u.base, pushed: u.head})
	return e.input("path", "deploy/web").input("name", "web").input("target-namespace", ns).
		input("inventory-namespace", ns).input("kubeconfig", cluster.Kubeconfig)
}

func TestPushAppliesAndReports(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expectTimes(2, statusCall) // pending and success; no comment on a push
	res := repo.run(t, gh, "push", ns).run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	d, err := cluster.Client(t).AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 2 || d.Status.ReadyReplicas != 2 {
		t.Fatalf("deployment after push: %v %+v", err, d)
	}
	if res.outputs["changed"] != "true" || res.outputs["revision"] != repo.head || res.outputs["objects"] != "2" || res.outputs["drifted"] != "false" {
		t.Errorf("outputs %v", res.outputs)
	}
	if !strings.Contains(res.outputs["result"], `"reason":"ApplySucceed"`) {
		t.Errorf("result output %s", res.outputs["result"])
	}
	st := gh.lastStatus()
	if st == nil || st["sha"] != repo.head || st["state"] != "success" || st["context"] != "kustomize-deploy/web" || !strings.Contains(st["target_url"].(string), "/actions/runs/4242") {
		t.Errorf("final status %v", st)
	}
	if gh.count("POST") != 2 { // pending + success, and no comment on a push
		t.Errorf("requests %v", gh.requests)
	}
	for _, a := range gh.auth {
		if !strings.Contains(a, "ghs_testtoken0123456789") {
			t.Errorf("request without the token: %q", a)
		}
	}
	if strings.Contains(withoutMaskCommands(res.stdout), "ghs_testtoken0123456789") {
		t.Error("the token appears in the log")
	}
	for _, want := range []string{"::group::kustomize-deploy: apply web", "::endgroup::"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if !strings.Contains(res.summary, "web") || !strings.Contains(res.summary, "ApplySucceed") {
		t.Errorf("summary:\n%s", res.summary)
	}
}

func TestPullRequestDiffWritesNothingAndKeepsOneComment(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	// One comment, created by the first PR run and edited by the second.
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, commentOn(7))
	gh.expectTimes(1, editCommentCall)
	// The cluster runs the base: 1 replica.
	repo.git("checkout", "-q", repo.base)
	if res := repo.run(t, gh, "push", ns).input("wait", "false").run(); res.code != exitOK {
		t.Fatalf("seeding the cluster: %s", res.stdout)
	}
	repo.git("checkout", "-q", "main")

	res := repo.run(t, gh, "pull_request.opened", ns).run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	client := cluster.Client(t)
	d, _ := client.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if *d.Spec.Replicas != 1 {
		t.Errorf("a PR run changed the cluster: replicas %d", *d.Spec.Replicas)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "web-settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a PR run created an object: %v", err)
	}
	bodies := gh.commentBodies()
	if len(bodies) != 1 || !strings.Contains(bodies[0], marker("unit=web", "")) || !strings.Contains(bodies[0], "replicas: 2") {
		t.Fatalf("comments %q", bodies)
	}
	if st := gh.lastStatus(); st["sha"] != repo.head || st["state"] != "success" {
		t.Errorf("status %v", st)
	}
	if res.outputs["changed"] != "true" {
		t.Errorf("outputs %v", res.outputs)
	}

	// The PR gets another push: the same comment is edited.
	repo.write("deploy/web/deployment.yaml", deploymentYAML("3"))
	repo.head = repo.commit("web at 3 replicas")
	if res := repo.run(t, gh, "pull_request.synchronize", ns).run(); res.code != exitOK {
		t.Fatalf("second PR run: %s", res.stdout)
	}
	bodies = gh.commentBodies()
	if len(bodies) != 1 || !strings.Contains(bodies[0], "replicas: 3") {
		t.Errorf("after synchronize: %d comments %q", len(bodies), bodies)
	}
	if gh.count("PATCH") != 1 {
		t.Errorf("the second run did not edit the comment: %v", gh.requests)
	}
}

func TestScheduleCorrectsDrift(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	// The report opens the drift issue (#20), the correction edits it,
	// and the check that finds no drift closes it with a comment.
	gh.expect(statusCall, labelCall, editIssue(20))
	gh.expectTimes(1, openIssueCall)
	gh.expectTimes(1, commentOn(20))
	if res := repo.run(t, gh, "push", ns).input("wait", "false").run(); res.code != exitOK {
		t.Fatalf("seeding: %s", res.stdout)
	}
	client := cluster.Client(t)
	cm, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "web-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["replicas"] = "99"
	if _, err := client.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	report := repo.run(t, gh, "schedule", ns).input("drift-action", "report").input("fail-on-drift", "true").run()
	if report.code != exitFail || report.outputs["drifted"] != "true" {
		t.Fatalf("report run: exit %d outputs %v\n%s", report.code, report.outputs, report.stdout)
	}
	cm, _ = client.CoreV1().ConfigMaps(ns).Get(t.Context(), "web-settings", metav1.GetOptions{})
	if cm.Data["replicas"] != "99" {
		t.Error("drift-action: report changed the cluster")
	}

	fix := repo.run(t, gh, "schedule", ns).run()
	if fix.code != exitOK || fix.outputs["drifted"] != "true" {
		t.Fatalf("correct run: exit %d outputs %v\n%s", fix.code, fix.outputs, fix.stdout)
	}
	cm, _ = client.CoreV1().ConfigMaps(ns).Get(t.Context(), "web-settings", metav1.GetOptions{})
	if cm.Data["replicas"] != "2" {
		t.Errorf("drift not corrected: %v", cm.Data)
	}
	if !strings.Contains(fix.summary, "web-settings") {
		t.Errorf("summary does not show what was corrected:\n%s", fix.summary)
	}

	again := repo.run(t, gh, "schedule", ns).input("fail-on-drift", "true").run()
	if again.code != exitOK || again.outputs["drifted"] != "false" {
		t.Errorf("after correction: exit %d outputs %v", again.code, again.outputs)
	}
}

func TestForbiddenGitHubIsAWarning(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.forbid = true
	// Tried, and refused.
	gh.expect(statusCall, commentOn(7))
	res := repo.run(t, gh, "pull_request.opened", ns).run()
	if res.code != exitOK {
		t.Fatalf("a read-only token failed the step: exit %d\n%s", res.code, res.stdout)
	}
	if !strings.Contains(res.stdout, "::warning::") || !strings.Contains(res.stdout, "read-only token") {
		t.Errorf("no warning about the token:\n%s", res.stdout)
	}
	if !strings.Contains(res.summary, "replicas: 2") {
		t.Errorf("the job summary lacks the diff:\n%s", res.summary)
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	ns := cluster.Namespace(t)
	key, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	repo := newUnitRepo(t)
	enc, err := sopstest.Encrypt(key.Recipient, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: "+dbPassword+"\n"), formats.Yaml, sopstest.K8sSecretRegex)
	if err != nil {
		t.Fatal(err)
	}
	repo.write("deploy/web/db.enc.yaml", string(enc))
	repo.head = repo.commit("db secret")
	gh := newFakeGitHub(t)
	// Every write is one the leak check below reads.
	gh.onlyExpectedWrites()
	gh.expect(statusCall, commentOn(7))
	var logs, summaries, outputs []string
	for _, event := range []string{"pull_request.opened", "push", "schedule"} {
		res := repo.run(t, gh, event, ns).input("sops-age-key", key.Identity).input("wait", "false").run()
		if res.code != exitOK {
			t.Fatalf("%s: exit %d\n%s", event, res.code, res.stdout)
		}
		logs = append(logs, withoutMaskCommands(res.stdout))
		summaries = append(summaries, res.summary, res.diff)
		for _, v := range res.outputs {
			outputs = append(outputs, v)
		}
		if event == "pull_request.opened" && !strings.Contains(res.stdout, "::add-mask::"+dbPassword) {
			t.Error("the decrypted value was not registered with ::add-mask::")
		}
	}
	s, err := cluster.Client(t).CoreV1().Secrets(ns).Get(t.Context(), "db", metav1.GetOptions{})
	if err != nil || string(s.Data["password"]) != dbPassword {
		t.Fatalf("secret in the cluster: %v", err)
	}
	all := strings.Join(append(append(append(append(logs, summaries...), outputs...), gh.commentBodies()...), gh.issueTexts()...), "\n")
	for _, leak := range []string{dbPassword, base64.StdEncoding.EncodeToString([]byte(dbPassword)), key.Identity} {
		if strings.Contains(all, leak) {
			t.Errorf("%q leaks into logs, summary, outputs or comments", leak)
		}
	}
}

// Mode rollback applies a revision of the unit's history again: the unit
// at that revision's commit, recorded as a rollback of it.
func TestRollbackModeAppliesARevisionAgain(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.expect(statusCall)
	// The base is pushed and applied, then the head.
	repo.git("checkout", "-q", repo.base)
	base := newRun(t, gh, "push", repo.dir, map[string]string{pushed: repo.base}).input("path", "deploy/web").input("name", "web").
		input("target-namespace", ns).input("inventory-namespace", ns).input("kubeconfig", cluster.Kubeconfig)
	if res := base.input("wait", "false").run(); res.code != exitOK {
		t.Fatalf("applying the base: %s", res.stdout)
	}
	repo.git("checkout", "-q", "main")
	if res := repo.run(t, gh, "push", ns).input("wait", "false").run(); res.code != exitOK {
		t.Fatalf("applying the head: %s", res.stdout)
	}
	res := repo.run(t, gh, "push", ns).input("wait", "false").input("mode", "rollback").input("to-revision", "1").input("allow-rollback", "true").run()
	if res.code != exitOK {
		t.Fatalf("rollback: exit %d\n%s", res.code, res.stdout)
	}
	d, err := cluster.Client(t).AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 1 {
		t.Fatalf("after the rollback: %v, replicas %d; want the base's 1\n%s", err, *d.Spec.Replicas, res.stdout)
	}
	if !strings.Contains(res.stdout, "rolling web back to revision 1") || !strings.Contains(res.summary, "a rollback to revision 1") || res.outputs["revision"] != repo.base {
		t.Errorf("the rollback does not say so: revision output %s\n%s\n%s", res.outputs["revision"], res.stdout, res.summary)
	}
	if res := repo.run(t, gh, "push", ns).input("mode", "rollback").input("to-revision", "9").run(); res.code == exitOK || !strings.Contains(res.stdout, "revision 9 is not in its history (revisions 1 to 3)") {
		t.Errorf("a revision not in the history: exit %d\n%s", res.code, res.stdout)
	}
}
