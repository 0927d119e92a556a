package action

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// kustomization is a Flux Kustomization of unit name at path, deployed to
// namespace ns; extra is more of its spec, indented by two spaces.
func kustomization(name, ns, path, extra string) string {
	return fmt.Sprintf(`---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: %s
  namespace: %s
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: flux-system}
  path: ./%s
  targetNamespace: %s
  prune: true
  timeout: 1m
%s`, name, ns, path, ns, extra)
}

func settingsYAML(name, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  value: %q\n", name, value)
}

// configRepo is a repository of Flux Kustomizations in clusters/test:
// base, then web (which depends on it), then extra; with broken, a unit
// whose build fails and one that depends on it.
func configRepo(t *testing.T, ns string, broken bool) *gitRepo {
	g := newGitRepo(t)
	g.write("deploy/base/settings.yaml", settingsYAML("base-settings", "1"))
	g.write("deploy/web/deployment.yaml", deploymentYAML("1"))
	g.write("deploy/extra/settings.yaml", settingsYAML("extra-settings", "1"))
	units := kustomization("base", ns, "deploy/base", "") +
		kustomization("web", ns, "deploy/web", "  dependsOn: [{name: base}]\n  wait: true\n") +
		kustomization("extra", ns, "deploy/extra", "")
	if broken {
		g.write("deploy/broken/kustomization.yaml", "resources: [missing.yaml]\n")
		units += kustomization("broken", ns, "deploy/broken", "") +
			kustomization("after-broken", ns, "deploy/extra", "  dependsOn: [{name: broken}]\n  namePrefix: after-\n")
	}
	g.write("clusters/test/units.yaml", units)
	g.write("clusters/test/flux-system/gotk-sync.yaml", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n")
	return g
}

// configRun is an action run of the configuration clusters/test.
func configRun(t *testing.T, gh *fakeGitHub, event string, repo *gitRepo, shas map[string]string, ns string) *runEnv {
	e := newRun(t, gh, event, repo.dir, shas).input("config", "clusters/test").input("inventory-namespace", ns)
	delete(e.vars, "INPUT_TIMEOUT") // each Kustomization has its own
	return e
}

func statusesByContext(gh *fakeGitHub) map[string][]map[string]any {
	gh.mu.Lock()
	defer gh.mu.Unlock()
	out := map[string][]map[string]any{}
	for _, s := range gh.statuses {
		c := s["context"].(string)
		out[c] = append(out[c], s)
	}
	return out
}

// A push applies every unit of the configuration in dependency order;
// a unit that fails skips only its dependents; each unit has its commit
// status, the summary shows them all, and the step fails.
func TestConfigPushAppliesEveryUnit(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := configRepo(t, ns, true)
	head := repo.commit("units")
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall) // statuses only: a push comments nowhere
	res := configRun(t, gh, "push", repo, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig).run()
	if res.code != exitFail {
		t.Fatalf("exit %d, want failure (a unit failed)\n%s", res.code, res.stdout)
	}
	client := cluster.Client(t)
	if d, err := client.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil || d.Status.ReadyReplicas != 1 {
		t.Errorf("web after the push: %v %+v", err, d)
	}
	for name, want := range map[string]bool{"base-settings": true, "extra-settings": true, "after-extra-settings": false} {
		_, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if want != (err == nil) {
			t.Errorf("ConfigMap %s: %v", name, err)
		}
	}

	var set result.Set
	if err := json.Unmarshal([]byte(res.outputs["result"]), &set); err != nil {
		t.Fatalf("result output is not a set: %v\n%s", err, res.outputs["result"])
	}
	reasons := map[string]result.Reason{}
	for _, u := range set.Units {
		reasons[u.Unit] = u.Reason
	}
	want := map[string]result.Reason{
		"base": result.ReasonApplySucceed, "web": result.ReasonApplySucceed, "extra": result.ReasonApplySucceed,
		"broken": result.ReasonBuildFailed, "after-broken": result.ReasonDependencyNotReady,
	}
	for u, r := range want {
		if reasons[u] != r {
			t.Errorf("unit %s: reason %q, want %q", u, reasons[u], r)
		}
	}
	if set.Ready || res.outputs["changed"] != "true" || res.outputs["objects"] != "3" || res.outputs["revision"] != head {
		t.Errorf("outputs %v", res.outputs)
	}

	statuses := statusesByContext(gh)
	for u, r := range want {
		list := statuses["kustomize-deploy/"+u]
		if len(list) != 2 || list[0]["state"] != "pending" {
			t.Errorf("statuses of %s: %v", u, list)
			continue
		}
		state := "success"
		if r != result.ReasonApplySucceed {
			state = "failure"
		}
		if last := list[1]; last["state"] != state || (state == "failure" && !strings.Contains(last["description"].(string), string(r))) {
			t.Errorf("final status of %s: %v", u, last)
		}
	}
	if len(statuses) != len(want) {
		t.Errorf("status contexts %v", statuses)
	}
	for _, s := range []string{"base", "web", "extra", "broken", "after-broken", "DependencyNotReady", "dependency broken", "missing.yaml", "3 ready, 2 failed"} {
		if !strings.Contains(res.summary, s) {
			t.Errorf("summary lacks %q:\n%s", s, res.summary)
		}
	}
	if len(gh.commentBodies()) != 0 {
		t.Errorf("a push commented: %q", gh.commentBodies())
	}
	if !strings.Contains(res.stdout, "::group::kustomize-deploy: apply of clusters/test (5 units)") {
		t.Errorf("log:\n%s", res.stdout)
	}

	// extra leaves the configuration (and broken is fixed): the next push
	// deletes its objects and reports it.
	repo.write("clusters/test/units.yaml", kustomization("base", ns, "deploy/base", "")+
		kustomization("web", ns, "deploy/web", "  dependsOn: [{name: base}]\n"))
	head = repo.commit("extra goes")
	res = configRun(t, gh, "push", repo, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig).run()
	if res.code != exitOK {
		t.Fatalf("second push: exit %d\n%s", res.code, res.stdout)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "extra-settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("extra's ConfigMap after extra left the configuration: %v", err)
	}
	if last := gh.lastStatusOf("kustomize-deploy/extra"); last["state"] != "success" || !strings.Contains(last["description"].(string), "1 deleted") {
		t.Errorf("status of extra after it left: %v", last)
	}
}

// A configuration whose every unit is refused, or that holds no unit at
// all, writes nothing: its Kustomizations rewritten with v1 fields under
// Flux's prototype kustomize.fluxcd.io/v1alpha1, or gone; the units it
// deployed are not garbage-collected.
func TestConfigOfNoUnitIsRefused(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newGitRepo(t)
	repo.write("deploy/base/settings.yaml", settingsYAML("base-settings", "1"))
	repo.write("deploy/extra/settings.yaml", settingsYAML("extra-settings", "1"))
	units := kustomization("base", ns, "deploy/base", "") + kustomization("extra", ns, "deploy/extra", "")
	repo.write("clusters/test/units.yaml", units)
	head := repo.commit("units")
	gh := newFakeGitHub(t)
	push := func(head string) runResult {
		return configRun(t, gh, "push", repo, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig).input("status", "false").run()
	}
	if res := push(head); res.code != exitOK {
		t.Fatalf("first push: exit %d\n%s", res.code, res.stdout)
	}
	for _, tc := range []struct{ name, units, want string }{
		// v1's fields under the prototype API: each unit is refused at its
		// field, and nothing of either is touched.
		{"v1 fields under the prototype API", strings.ReplaceAll(units, "kustomize.toolkit.fluxcd.io/v1", "kustomize.fluxcd.io/v1alpha1"), `Kustomization ` + ns + `/base: spec.prune: must be a string (quote it)`},
		{"no Kustomization", "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n", "configuration clusters/test holds no Flux Kustomization to run: refused"},
	} {
		repo.write("clusters/test/units.yaml", tc.units)
		res := push(repo.commit(tc.name))
		if res.code != exitFail || !strings.Contains(res.stdout, tc.want) {
			t.Errorf("%s: exit %d, want a failure saying %q\n%s", tc.name, res.code, tc.want, res.stdout)
		}
		for _, cm := range []string{"base-settings", "extra-settings"} {
			if _, err := cluster.Client(t).CoreV1().ConfigMaps(ns).Get(t.Context(), cm, metav1.GetOptions{}); err != nil {
				t.Errorf("%s: ConfigMap %s: %v", tc.name, cm, err)
			}
		}
	}
}

// Units that leave a configuration are listed by the pull request's diff
// before its merge collects them. Over max-collect, the diff fails (each
// such unit's status, a notice naming the label) and the push of the
// merge collects none; the allow-prune label lets both through. A fork's
// pull request, without cluster access, finds them against its base.
func TestConfigCollectionBudgetGate(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newGitRepo(t)
	units := ""
	for _, u := range []string{"keep", "old", "older"} {
		repo.write("deploy/"+u+"/settings.yaml", settingsYAML(u+"-settings", "1"))
		units += kustomization(u, ns, "deploy/"+u, "")
	}
	repo.write("clusters/test/units.yaml", units)
	base := repo.commit("three units")
	gh := newFakeGitHub(t)
	run := func(event, head string) *runEnv {
		return configRun(t, gh, event, repo, map[string]string{prOpened: head, prBase: base, pushed: head, "3333333333333333333333333333333333333333": head}, ns).input("max-collect", "1")
	}
	if res := run("push", base).input("kubeconfig", cluster.Kubeconfig).run(); res.code != exitOK {
		t.Fatalf("first push: exit %d\n%s", res.code, res.stdout)
	}
	repo.write("clusters/test/units.yaml", kustomization("keep", ns, "deploy/keep", ""))
	head := repo.commit("old and older leave")
	client := cluster.Client(t)
	stay := func(when string) {
		t.Helper()
		for _, cm := range []string{"old-settings", "older-settings"} {
			if _, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), cm, metav1.GetOptions{}); err != nil {
				t.Errorf("%s: ConfigMap %s: %v", when, cm, err)
			}
		}
	}

	res := run("pull_request.opened", head).input("kubeconfig", cluster.Kubeconfig).run()
	st := gh.lastStatusOf("kustomize-deploy/old")
	if res.code != exitFail || st == nil || st["state"] != "failure" || !strings.Contains(st["description"].(string), "PruneFailed") {
		t.Errorf("unlabelled PR: exit %d, status of old %v\n%s", res.code, st, res.stdout)
	}
	comment := gh.issueComments(7)
	if len(comment) != 1 || !strings.Contains(comment[0], "refusing to garbage-collect 2 unit(s) that left the configuration (old, older): more than the 1 unit(s) allowed") ||
		!strings.Contains(comment[0], "ConfigMap/"+ns+"/old-settings") {
		t.Errorf("the comment does not list the refused collection:\n%s", strings.Join(comment, "\n---\n"))
	}
	if !strings.Contains(res.stdout, `garbage-collect over max-collect, label the pull request "allow-prune"`) {
		t.Errorf("no notice naming the label:\n%s", res.stdout)
	}
	stay("the PR's diff")

	res = run("pull_request.labeled", head).input("kubeconfig", cluster.Kubeconfig).run()
	if st := gh.lastStatusOf("kustomize-deploy/older"); res.code != exitOK || st["state"] != "success" {
		t.Errorf("labelled PR: exit %d, status of older %v\n%s", res.code, st, res.stdout)
	}
	if c := gh.issueComments(7); len(c) != 1 || !strings.Contains(c[0], "older-settings` · unit older: its unit left the configuration: the apply garbage-collects it") {
		t.Errorf("the labelled PR's comment:\n%s", strings.Join(c, "\n---\n"))
	}

	res = run("pull_request.fork", head).run() // no kubeconfig
	if res.code != exitFail || !strings.Contains(res.outputs["result"], "not in the configuration since "+base[:12]) || !strings.Contains(res.outputs["result"], "more than the 1 unit(s) allowed") {
		t.Errorf("fork PR: exit %d, result %s\n%s", res.code, res.outputs["result"], res.stdout)
	}

	res = run("push", head).input("kubeconfig", cluster.Kubeconfig).run()
	if res.code != exitFail || !strings.Contains(res.outputs["result"], "refusing to garbage-collect 2 unit(s)") {
		t.Errorf("push of an unlabelled merge: exit %d, result %s", res.code, res.outputs["result"])
	}
	stay("the unlabelled merge")

	gh.merged[head] = []string{"allow-prune"}
	if res = run("push", head).input("kubeconfig", cluster.Kubeconfig).run(); res.code != exitOK {
		t.Fatalf("push of a labelled merge: exit %d\n%s", res.code, res.stdout)
	}
	for _, cm := range []string{"old-settings", "older-settings"} {
		if _, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), cm, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the labelled merge did not collect %s: %v", cm, err)
		}
	}
}

// A pull request without cluster access gets one comment with every
// unit's offline diff; nothing is written.
func TestConfigPullRequestOfflineDiff(t *testing.T) {
	repo := configRepo(t, "apps", false)
	base := repo.commit("units")
	repo.write("deploy/web/deployment.yaml", deploymentYAML("3"))
	repo.write("deploy/base/settings.yaml", settingsYAML("base-settings", "2"))
	head := repo.commit("web at 3 replicas, base at 2")
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, commentOn(8))
	res := configRun(t, gh, "pull_request.fork", repo, map[string]string{"3333333333333333333333333333333333333333": head, prBase: base}, "apps").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	bodies := gh.commentBodies()
	if len(bodies) != 1 {
		t.Fatalf("comments %q", bodies)
	}
	for _, s := range []string{marker("config=clusters/test", ""), "### web", "+  replicas: 3", "### base", `+  value: "2"`, "**2 of 3 units rendered**", "not affected (1): extra"} {
		if !strings.Contains(bodies[0], s) {
			t.Errorf("comment lacks %q:\n%s", s, bodies[0])
		}
	}
	if res.outputs["changed"] != "true" || !strings.HasPrefix(res.outputs["diff-file"], diffDir+"/clusters-test") {
		t.Errorf("outputs %v", res.outputs)
	}
	if !strings.Contains(res.diff, "== web") || !strings.Contains(res.diff, "== base") {
		t.Errorf("diff file:\n%s", res.diff)
	}
	for _, u := range []string{"base", "web", "extra"} {
		if last := gh.lastStatusOf("kustomize-deploy/" + u); last["state"] != "success" {
			t.Errorf("status of %s: %v", u, last)
		}
	}
}

// With all-units, the same pull request renders and diffs every unit,
// the one its change does not reach as well, as diff --all-units does.
func TestConfigPullRequestAllUnits(t *testing.T) {
	repo := configRepo(t, "apps", false)
	base := repo.commit("units")
	repo.write("deploy/web/deployment.yaml", deploymentYAML("3"))
	head := repo.commit("web at 3 replicas")
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, commentOn(8))
	res := configRun(t, gh, "pull_request.fork", repo, map[string]string{"3333333333333333333333333333333333333333": head, prBase: base}, "apps").input("all-units", "true").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	body := gh.commentBodies()[0]
	if !strings.Contains(body, "+  replicas: 3") || strings.Contains(body, "not affected") || strings.Contains(body, "units rendered") {
		t.Errorf("the comment does not show every unit rendered:\n%s", body)
	}
	var out struct {
		Units []struct {
			Name string `json:"name"`
		} `json:"units"`
		Reach *struct {
			NotAffected int `json:"notAffected"`
		} `json:"reach"`
	}
	if err := json.Unmarshal([]byte(res.outputs["result"]), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Units) != 3 || (out.Reach != nil && out.Reach.NotAffected != 0) {
		t.Errorf("result: %d units, reach %+v; want 3 rendered, none left out", len(out.Units), out.Reach)
	}
}

// A unit's spec.kubeConfig Secret maps to a kubeconfig given through the
// step's environment; a Secret without one is an error naming the input.
func TestConfigKubeconfigSecrets(t *testing.T) {
	ns := cluster.Namespace(t)
	g := newGitRepo(t)
	g.write("deploy/remote/settings.yaml", settingsYAML("remote-settings", "1"))
	g.write("clusters/test/units.yaml", kustomization("remote", ns, "deploy/remote", "  kubeConfig:\n    secretRef: {name: remote-kubeconfig}\n"))
	head := g.commit("a unit on another cluster")
	kubeconfig, err := os.ReadFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	e := configRun(t, gh, "push", g, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig)
	res := e.run()
	if res.code != exitFail || !strings.Contains(res.stdout, "kubeconfig-secrets") || !strings.Contains(res.stdout, "remote-kubeconfig") {
		t.Fatalf("without the input: exit %d\n%s", res.code, res.stdout)
	}

	e.input("kubeconfig-secrets", "remote-kubeconfig=$REMOTE_KUBECONFIG")
	e.vars["REMOTE_KUBECONFIG"] = string(kubeconfig)
	res = e.run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "remote-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("remote's ConfigMap: %v", err)
	}
	if last := gh.lastStatusOf("kustomize-deploy/remote-kubeconfig/remote"); last["state"] != "success" {
		t.Errorf("status: %v (all: %v)", last, statusesByContext(gh))
	}
}

// A unit's spec.decryption Secret maps to age identities given through
// the step's environment, as the CLI's --decryption-secret does: without
// them the unit cannot decrypt, with them it applies, and the identities
// never show.
func TestConfigDecryptionSecrets(t *testing.T) {
	ns := cluster.Namespace(t)
	key, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: %s\nstringData:\n  password: dec-secrets-pw-4k\n", ns)
	enc, err := sopstest.Encrypt(key.Recipient, []byte(secret), formats.Yaml, sopstest.K8sSecretRegex)
	if err != nil {
		t.Fatal(err)
	}
	g := newGitRepo(t)
	g.write("clusters/test/units.yaml", kustomization("db", ns, "deploy/db", "  decryption: {provider: sops, secretRef: {name: sops-age}}\n"))
	g.write("deploy/db/db.enc.yaml", string(enc))
	head := g.commit("db")

	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall) // statuses only: a push comments nowhere
	e := configRun(t, gh, "push", g, map[string]string{pushed: head}, ns).input("kubeconfig", cluster.Kubeconfig)
	if res := e.run(); res.code != exitFail || !strings.Contains(res.stdout, "no matching age identity") {
		t.Fatalf("without the Secret's identities: exit %d\n%s", res.code, res.stdout)
	}
	e.input("decryption-secrets", "sops-age=$DB_AGE_KEY")
	e.vars["DB_AGE_KEY"] = key.Identity
	res := e.run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	s, err := cluster.Client(t).CoreV1().Secrets(ns).Get(t.Context(), "db", metav1.GetOptions{})
	if err != nil || string(s.Data["password"]) != "dec-secrets-pw-4k" {
		t.Fatalf("the decrypted Secret: %v %v", err, s)
	}
	if strings.Contains(withoutMaskCommands(res.stdout)+res.summary, key.Identity) || !strings.Contains(res.stdout, "::add-mask::"+key.Identity) {
		t.Error("the age identity shows in the log or the summary, or was not masked")
	}

	e.input("decryption-secrets", "sops-age=keys/missing.txt")
	if res := e.run(); res.code != exitFail || !strings.Contains(res.stdout, "input 'decryption-secrets' sops-age") {
		t.Errorf("a file that is not there: exit %d\n%s", res.code, res.stdout)
	}
}

// Inputs that each Kustomization sets for itself are refused with config,
// each named.
func TestConfigRefusesPerUnitInputs(t *testing.T) {
	repo := configRepo(t, "apps", false)
	head := repo.commit("units")
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites() // and expects none
	e := configRun(t, gh, "push", repo, map[string]string{pushed: head}, "apps").
		input("path", "deploy/web").input("prune", "false").input("depends-on", "base").input("kubeconfig", cluster.Kubeconfig)
	res := e.run()
	if res.code != exitFail {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	for _, s := range []string{"input 'path': not with 'config'", "input 'prune'", "input 'depends-on'", "spec.dependsOn"} {
		if !strings.Contains(res.stdout, s) {
			t.Errorf("error lacks %q:\n%s", s, res.stdout)
		}
	}
	if len(gh.requests) != 0 {
		t.Errorf("bad inputs, yet requests to GitHub: %v", gh.requests)
	}
}

// Secrets of a configuration's units never leak: a SOPS Secret in a unit,
// and a SOPS Secret of the configuration used by postBuild.substituteFrom
// (whose values then sit in a ConfigMap), through an apply, a PR diff
// against the cluster and a drift run.
func TestConfigSecretsNeverLeak(t *testing.T) {
	ns := cluster.Namespace(t)
	key, err := sopstest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	encrypt := func(name, field, value string) string {
		enc, err := sopstest.Encrypt(key.Recipient, []byte(fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\nstringData:\n  %s: %s\n", name, ns, field, value)), formats.Yaml, sopstest.K8sSecretRegex)
		if err != nil {
			t.Fatal(err)
		}
		return string(enc)
	}
	g := newGitRepo(t)
	g.write("clusters/test/units.yaml", kustomization("db", ns, "deploy/db",
		"  decryption: {provider: sops, secretRef: {name: sops-age}}\n  postBuild:\n    substituteFrom:\n    - {kind: Secret, name: db-vars}\n"))
	g.write("deploy/db/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db-settings\ndata:\n  token: ${API_TOKEN}\n")
	plain := []string{"cfg-token-first-7q", "cfg-password-first-7q", "cfg-token-second-7q", "cfg-password-second-7q"}
	g.write("clusters/test/db-vars.enc.yaml", encrypt("db-vars", "API_TOKEN", plain[0]))
	g.write("deploy/db/db.enc.yaml", encrypt("db", "password", plain[1]))
	first := g.commit("db")
	g.write("clusters/test/db-vars.enc.yaml", encrypt("db-vars", "API_TOKEN", plain[2]))
	g.write("deploy/db/db.enc.yaml", encrypt("db", "password", plain[3]))
	second := g.commit("new db credentials")

	gh := newFakeGitHub(t)
	// Every write is one the leak check below reads (the label's text is
	// fixed): the PR comment, the drift issue.
	gh.onlyExpectedWrites()
	gh.expect(statusCall, commentOn(7), labelCall)
	gh.expectTimes(1, openIssueCall)
	var seen []string
	run := func(event string, shas map[string]string) runResult {
		res := configRun(t, gh, event, g, shas, ns).input("kubeconfig", cluster.Kubeconfig).input("sops-age-key", key.Identity).run()
		if res.code != exitOK {
			t.Fatalf("%s: exit %d\n%s", event, res.code, res.stdout)
		}
		seen = append(seen, withoutMaskCommands(res.stdout), res.summary, res.diff)
		for _, v := range res.outputs {
			seen = append(seen, v)
		}
		return res
	}
	g.git("checkout", "-q", first)
	run("push", map[string]string{pushed: first})
	g.git("checkout", "-q", second)
	pr := run("pull_request.opened", map[string]string{prOpened: second, prBase: first})
	if !strings.Contains(pr.summary, "-  token: '*** (sha256:") || !strings.Contains(pr.summary, "+  password: '*** (changed, sha256:") {
		t.Errorf("the PR diff does not show both changes:\n%s", pr.summary)
	}
	run("schedule", map[string]string{pushed: second})

	cm, err := cluster.Client(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "db-settings", metav1.GetOptions{})
	if err != nil || cm.Data["token"] != plain[2] {
		t.Fatalf("the substituted value in the cluster: %v %v", err, cm.Data)
	}
	// The drift run corrected db: its issue shows the substituted token
	// and the Secret changing.
	if issues := gh.issueList(); len(issues) != 1 || !strings.Contains(issues[0].body, "ConfigMap/"+ns+"/db-settings") {
		t.Errorf("drift issues %+v", issues)
	}
	all := strings.Join(append(append(seen, gh.commentBodies()...), gh.issueTexts()...), "\n")
	for _, p := range plain {
		for _, leak := range []string{p, base64.StdEncoding.EncodeToString([]byte(p))} {
			if strings.Contains(all, leak) {
				t.Errorf("%q leaks into logs, summaries, diff files, outputs, comments or issues", leak)
			}
		}
	}
	if strings.Contains(all, key.Identity) {
		t.Error("the age key leaks")
	}
}

// Mode test checks the configuration without a cluster, as `test
// --config` does, and writes its verdicts to the job summary: pass or
// fail per Kustomization, a binding to cluster-admin flagged, the step
// failing with a unit that does not build; no PR comment, and no
// kubeconfig is read.
func TestConfigTestWritesAJobSummary(t *testing.T) {
	repo := configRepo(t, "apps", true)
	repo.write("deploy/extra/admin.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: extra-admin}\n"+
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: extra, namespace: apps}]\n")
	head := repo.commit("units")
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	res := configRun(t, gh, "pull_request.opened", repo, map[string]string{"3333333333333333333333333333333333333333": head, prBase: head}, "apps").
		input("mode", "test").input("kubeconfig", "/nonexistent/kubeconfig").run()
	if res.code != exitFail {
		t.Fatalf("exit %d, want a failure (a unit does not build)\n%s", res.code, res.stdout)
	}
	for _, want := range []string{
		"## kustomize-deploy: test of clusters/test",
		"| ✅ PASS | `base` |", "| ✅ PASS | `web` |", "| ❌ FAIL | `broken` | BuildFailed |",
		"`ClusterRoleBinding/extra-admin` `roleRef`", "of 5 unit(s) passed.**",
	} {
		if !strings.Contains(res.summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, res.summary)
		}
	}
	if len(gh.commentBodies()) != 0 {
		t.Errorf("a test commented: %q", gh.commentBodies())
	}
	if !strings.Contains(res.outputs["failed-units"], "broken") {
		t.Errorf("outputs %v", res.outputs)
	}
	unit := newRun(t, gh, "pull_request.opened", repo.dir, map[string]string{"3333333333333333333333333333333333333333": head, prBase: head}).
		input("path", "deploy/base").input("mode", "test").run()
	if unit.code == exitOK || !strings.Contains(unit.stdout, "test checks a configuration") {
		t.Errorf("mode test without config: exit %d\n%s", unit.code, unit.stdout)
	}
}
