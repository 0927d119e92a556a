package action

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// seeded is a unit repository deployed to namespace ns by a push.
func seeded(t *testing.T, gh *fakeGitHub, ns string) *unitRepo {
	t.Helper()
	repo := newUnitRepo(t)
	if res := repo.run(t, gh, "push", ns).input("wait", "false").run(); res.code != exitOK {
		t.Fatalf("seeding the cluster: %s", res.stdout)
	}
	return repo
}

// setSetting changes the unit's ConfigMap in the cluster, as someone with
// kubectl would.
func setSetting(t *testing.T, ns, value string) {
	t.Helper()
	client := cluster.Client(t)
	cm, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "web-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["replicas"] = value
	if _, err := client.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// driftRun is a scheduled drift check that must succeed.
func driftRun(t *testing.T, e *runEnv) runResult {
	t.Helper()
	res := e.run()
	if res.code != exitOK {
		t.Fatalf("drift run: exit %d\n%s", res.code, res.stdout)
	}
	return res
}

// requestsTo counts the requests to paths starting with prefix.
func (g *fakeGitHub) requestsTo(method, prefix string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, r := range g.requests {
		if strings.HasPrefix(r, method+" "+prefix) {
			n++
		}
	}
	return n
}

const issuesAPI = "/repos/acme/deployments/issues"

// The life of a drift issue: opened by the first check that finds drift,
// edited (never a second issue) while it lasts, told when a run corrected
// it, closed with a comment by the first check that finds the cluster
// matching Git. The commit status shows drift on the commit the cluster
// runs, which is not the scheduled run's when Git moved on without
// touching the unit.
func TestDriftIssueOpensUpdatesCloses(t *testing.T) {
	ns := cluster.Namespace(t)
	gh := newFakeGitHub(t)
	// One issue (#20), edited while the drift lasts, when corrected and
	// when closed, with one closing comment; nothing after.
	gh.onlyExpectedWrites()
	gh.expect(statusCall, labelCall)
	gh.expectTimes(1, openIssueCall)
	gh.expectTimes(3, editIssue(20))
	gh.expectTimes(1, commentOn(20))
	repo := seeded(t, gh, ns)
	deployed := repo.head
	repo.write("README.md", "docs only\n")
	repo.head = repo.commit("docs")
	statusesBefore := len(gh.statuses)

	setSetting(t, ns, "99")
	res := driftRun(t, repo.run(t, gh, "schedule", ns).input("drift-action", "report"))
	issues := gh.issueList()
	if len(issues) != 1 {
		t.Fatalf("issues after the first drift: %+v", issues)
	}
	first := issues[0]
	if first.title != "Drift: web" || first.state != "open" || first.author != botLogin || !slices.Equal(first.labels, []string{driftLabel}) {
		t.Errorf("issue %+v", first)
	}
	for _, want := range []string{driftMarker("web", ""), "**The cluster differs from Git:** 1 object (1 to configure)", "ConfigMap/" + ns + "/web-settings", `-  replicas: "99"`, "`" + deployed + "`", "/actions/runs/4242"} {
		if !strings.Contains(first.body, want) {
			t.Errorf("issue body lacks %q:\n%s", want, first.body)
		}
	}
	if !strings.Contains(res.stdout, fmt.Sprintf("opened drift issue #%d of web", first.number)) {
		t.Errorf("log:\n%s", res.stdout)
	}
	st := gh.lastStatusOf("kustomize-deploy/web")
	if st["sha"] != deployed || st["state"] != "failure" || st["description"] != "drifted: 1 object differs from Git" {
		t.Errorf("status of the drift %v, want failure on the deployed commit %s", st, deployed)
	}
	for _, s := range gh.statuses[statusesBefore:] {
		if s["state"] == "pending" {
			t.Errorf("a drift check set a pending status: %v", s)
		}
	}

	// The drift persists, and changes: the same issue, edited.
	setSetting(t, ns, "77")
	res = driftRun(t, repo.run(t, gh, "schedule", ns).input("drift-action", "report"))
	issues = gh.issueList()
	if len(issues) != 1 || issues[0].number != first.number || !strings.Contains(issues[0].body, `-  replicas: "77"`) || strings.Contains(issues[0].body, `"99"`) {
		t.Fatalf("issues while the drift lasts: %+v", issues)
	}
	if n := gh.requestsTo("PATCH", fmt.Sprintf("%s/%d", issuesAPI, first.number)); n != 1 {
		t.Errorf("%d edits of the issue, want 1", n)
	}
	if !strings.Contains(res.stdout, fmt.Sprintf("updated drift issue #%d of web", first.number)) {
		t.Errorf("log:\n%s", res.stdout)
	}

	// drift-action: correct re-applies Git: the issue says so and stays
	// open until a later check confirms; the status is green on the
	// commit now applied.
	driftRun(t, repo.run(t, gh, "schedule", ns))
	issues = gh.issueList()
	if len(issues) != 1 || issues[0].state != "open" || !strings.Contains(issues[0].body, "**Drift corrected:** 1 object differed from Git and was re-applied by this run") {
		t.Fatalf("issues after the correction: %+v", issues)
	}
	st = gh.lastStatusOf("kustomize-deploy/web")
	if st["sha"] != repo.head || st["state"] != "success" || st["description"] != "drift corrected: 1 object re-applied, matches Git" {
		t.Errorf("status after the correction %v, want success on %s", st, repo.head)
	}

	// The cluster matches Git: a closing comment, then closed.
	res = driftRun(t, repo.run(t, gh, "schedule", ns))
	issues = gh.issueList()
	if len(issues) != 1 || issues[0].state != "closed" || issues[0].stateReason != "completed" {
		t.Fatalf("issues once the cluster matches: %+v", issues)
	}
	comments := gh.issueComments(first.number)
	if len(comments) != 1 || !strings.Contains(comments[0], "**The cluster matches Git again** at `"+repo.head+"`") || !strings.Contains(comments[0], "changed nothing") {
		t.Errorf("closing comments %q", comments)
	}
	if !strings.Contains(res.stdout, fmt.Sprintf("closed drift issue #%d of web", first.number)) {
		t.Errorf("log:\n%s", res.stdout)
	}
	if st := gh.lastStatusOf("kustomize-deploy/web"); st["sha"] != repo.head || st["state"] != "success" || st["description"] != "matches Git" {
		t.Errorf("status without drift %v", st)
	}

	// Nothing to say on the next check.
	writes := gh.requestsTo("POST", issuesAPI) + gh.requestsTo("PATCH", issuesAPI)
	driftRun(t, repo.run(t, gh, "schedule", ns))
	if n := gh.requestsTo("POST", issuesAPI) + gh.requestsTo("PATCH", issuesAPI); n != writes || len(gh.issueList()) != 1 {
		t.Errorf("a check without drift wrote to issues: %v", gh.requests)
	}
}

// An issue someone else opened with our marker and label is never edited,
// commented on or closed: ours is a new one.
func TestDriftIssueLeavesOthersIssues(t *testing.T) {
	ns := cluster.Namespace(t)
	gh := newFakeGitHub(t)
	repo := seeded(t, gh, ns)
	planted := driftMarker("web", "") + "\nNo drift, all good. Close me."
	theirs := gh.openIssue("mallory", "Drift: web", planted, driftLabel)
	// Ours is opened, then closed with a comment; theirs is never touched.
	gh.onlyExpectedWrites()
	gh.expect(statusCall, labelCall, commentCall, editIssueCall)
	gh.expectTimes(1, openIssueCall)
	gh.expectTimes(0, editIssue(theirs))
	gh.expectTimes(0, commentOn(theirs))

	setSetting(t, ns, "99")
	driftRun(t, repo.run(t, gh, "schedule", ns).input("drift-action", "report"))
	setSetting(t, ns, "2")
	driftRun(t, repo.run(t, gh, "schedule", ns))

	issues := gh.issueList()
	if len(issues) != 2 {
		t.Fatalf("issues %+v, want the planted one and ours", issues)
	}
	if got := issues[0]; got.number != theirs || got.body != planted || got.state != "open" || len(gh.issueComments(theirs)) != 0 {
		t.Errorf("the planted issue was touched: %+v, comments %q", got, gh.issueComments(theirs))
	}
	if ours := issues[1]; ours.author != botLogin || ours.state != "closed" || len(gh.issueComments(ours.number)) != 1 {
		t.Errorf("our issue %+v", ours)
	}
	if n := gh.requestsTo("PATCH", fmt.Sprintf("%s/%d", issuesAPI, theirs)); n != 0 {
		t.Errorf("%d edits of the planted issue", n)
	}
}

// The same unit in two clusters: one issue each, closed each on its own.
func TestDriftIssuePerEnvironment(t *testing.T) {
	ns := cluster.Namespace(t)
	gh := newFakeGitHub(t)
	// One issue per cluster: prod-eu's (#20) is closed with a comment,
	// prod-us's (#21) stays as it is.
	gh.onlyExpectedWrites()
	gh.expect(statusCall, labelCall)
	gh.expectTimes(2, openIssueCall)
	gh.expectTimes(1, commentOn(20))
	gh.expectTimes(1, editIssue(20))
	gh.expectTimes(0, editIssue(21))
	repo := seeded(t, gh, ns)
	setSetting(t, ns, "99")
	for _, env := range []string{"prod-eu", "prod-us"} {
		driftRun(t, repo.run(t, gh, "schedule", ns).input("cluster", env).input("drift-action", "report"))
	}
	issues := gh.issueList()
	if len(issues) != 2 || issues[0].title != "Drift: web (prod-eu)" || issues[1].title != "Drift: web (prod-us)" ||
		!strings.Contains(issues[0].body, driftMarker("web", "prod-eu")) || !strings.Contains(issues[1].body, driftMarker("web", "prod-us")) {
		t.Fatalf("issues %+v", issues)
	}
	for _, ctx := range []string{"kustomize-deploy/prod-eu/web", "kustomize-deploy/prod-us/web"} {
		if st := gh.lastStatusOf(ctx); st["state"] != "failure" {
			t.Errorf("status %s: %v", ctx, st)
		}
	}

	setSetting(t, ns, "2")
	driftRun(t, repo.run(t, gh, "schedule", ns).input("cluster", "prod-eu"))
	issues = gh.issueList()
	if issues[0].state != "closed" || issues[1].state != "open" {
		t.Errorf("after prod-eu matches: %s is %s, %s is %s", issues[0].title, issues[0].state, issues[1].title, issues[1].state)
	}
}

// A token that may not write issues (or read them): a warning naming the
// permission; the step's result and outputs are what they would be.
func TestDriftIssueReadOnlyToken(t *testing.T) {
	ns := cluster.Namespace(t)
	gh := newFakeGitHub(t)
	// The issue is tried for, and refused.
	gh.expect(statusCall, openIssueCall)
	repo := seeded(t, gh, ns)
	setSetting(t, ns, "99")
	for _, tc := range []struct {
		name string
		set  func()
	}{
		{"writes refused", func() { gh.forbid = true }},
		{"issues not even readable", func() { gh.forbid, gh.forbidIssues = false, true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gh.mu.Lock()
			tc.set()
			gh.mu.Unlock()
			res := driftRun(t, repo.run(t, gh, "schedule", ns).input("drift-action", "report"))
			if res.outputs["drifted"] != "true" {
				t.Errorf("outputs %v", res.outputs)
			}
			if !strings.Contains(res.stdout, "::warning::opening or updating the drift issue of web: the token may not do this: give the job `permissions: issues: write`") {
				t.Errorf("no warning naming issues: write:\n%s", res.stdout)
			}
			if len(gh.issueList()) != 0 {
				t.Errorf("issues %+v", gh.issueList())
			}
		})
	}
	// fail-on-drift still decides the step.
	if res := repo.run(t, gh, "schedule", ns).input("drift-action", "report").input("fail-on-drift", "true").run(); res.code != exitFail {
		t.Errorf("fail-on-drift: exit %d", res.code)
	}
}

// drift-issues: false: no issue is looked for or opened.
func TestDriftIssuesOff(t *testing.T) {
	ns := cluster.Namespace(t)
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	repo := seeded(t, gh, ns)
	setSetting(t, ns, "99")
	driftRun(t, repo.run(t, gh, "schedule", ns).input("drift-action", "report").input("drift-issues", "false"))
	if n := gh.requestsTo("GET", issuesAPI) + gh.requestsTo("POST", issuesAPI) + gh.requestsTo("POST", "/repos/acme/deployments/labels"); n != 0 {
		t.Errorf("requests about issues: %v", gh.requests)
	}
	if st := gh.lastStatusOf("kustomize-deploy/web"); st["state"] != "failure" {
		t.Errorf("the status still shows the drift: %v", st)
	}
}

// A SOPS Secret that drifted: the issue shows that it differs, never its
// values, neither Git's (decrypted by the run) nor the cluster's.
func TestDriftIssueMasksSecrets(t *testing.T) {
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
	// The issue the leak check reads is opened, edited and closed with a
	// comment; nothing else is written but statuses and the label.
	gh.onlyExpectedWrites()
	gh.expect(statusCall, labelCall, editIssue(20))
	gh.expectTimes(1, openIssueCall)
	gh.expectTimes(1, commentOn(20))
	if res := repo.run(t, gh, "push", ns).input("sops-age-key", key.Identity).input("wait", "false").run(); res.code != exitOK {
		t.Fatalf("seeding: %s", res.stdout)
	}
	const inCluster = "typed-by-hand-in-the-cluster-42"
	client := cluster.Client(t)
	s, err := client.CoreV1().Secrets(ns).Get(t.Context(), "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data["password"] = []byte(inCluster)
	if _, err := client.CoreV1().Secrets(ns).Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	driftRun(t, repo.run(t, gh, "schedule", ns).input("sops-age-key", key.Identity).input("drift-action", "report"))
	driftRun(t, repo.run(t, gh, "schedule", ns).input("sops-age-key", key.Identity))
	driftRun(t, repo.run(t, gh, "schedule", ns).input("sops-age-key", key.Identity))

	issues := gh.issueList()
	if len(issues) != 1 || issues[0].state != "closed" || !strings.Contains(issues[0].body, "Secret/"+ns+"/db") {
		t.Fatalf("issues %+v", issues)
	}
	all := strings.Join(append(gh.issueTexts(), gh.commentBodies()...), "\n")
	for _, leak := range []string{dbPassword, inCluster, base64.StdEncoding.EncodeToString([]byte(dbPassword)), base64.StdEncoding.EncodeToString([]byte(inCluster)), key.Identity} {
		if strings.Contains(all, leak) {
			t.Errorf("%q leaks into the drift issue", leak)
		}
	}
}

// A configuration's drift check: one issue per drifted unit, none for a
// unit that matches Git, each unit's status on its own.
func TestConfigDriftOpensIssuePerUnit(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := configRepo(t, ns, false)
	head := repo.commit("units")
	gh := newFakeGitHub(t)
	// An issue for each drifted unit (base, extra), none for web.
	gh.onlyExpectedWrites()
	gh.expect(statusCall, labelCall)
	gh.expectTimes(2, openIssueCall)
	shas := map[string]string{pushed: head}
	if res := configRun(t, gh, "push", repo, shas, ns).input("kubeconfig", cluster.Kubeconfig).run(); res.code != exitOK {
		t.Fatalf("seeding: exit %d\n%s", res.code, res.stdout)
	}
	client := cluster.Client(t)
	for _, name := range []string{"base-settings", "extra-settings"} {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["value"] = "changed by hand"
		if _, err := client.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	res := configRun(t, gh, "schedule", repo, shas, ns).input("kubeconfig", cluster.Kubeconfig).input("drift-action", "report").run()
	if res.code != exitOK || res.outputs["drifted"] != "true" {
		t.Fatalf("drift run: exit %d outputs %v\n%s", res.code, res.outputs, res.stdout)
	}
	issues := gh.issueList()
	var titles []string
	for _, is := range issues {
		titles = append(titles, is.title)
		unit := strings.TrimPrefix(is.title, "Drift: ")
		if !strings.Contains(is.body, driftMarker(unit, "")) || !strings.Contains(is.body, "ConfigMap/"+ns+"/"+unit+"-settings") {
			t.Errorf("issue %q:\n%s", is.title, is.body)
		}
	}
	if !slices.Equal(titles, []string{"Drift: base", "Drift: extra"}) && !slices.Equal(titles, []string{"Drift: extra", "Drift: base"}) {
		t.Errorf("issues %q, want one for base and one for extra", titles)
	}
	for unit, want := range map[string]string{"base": "failure", "extra": "failure", "web": "success"} {
		if st := gh.lastStatusOf("kustomize-deploy/" + unit); st["state"] != want || st["sha"] != head {
			t.Errorf("status of %s: %v, want %s on %s", unit, st, want, head)
		}
	}
}
