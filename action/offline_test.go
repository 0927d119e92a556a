package action

import (
	"strings"
	"testing"
)

func TestForkedPullRequestGetsAnOfflineDiff(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	e := newRun(t, gh, "pull_request.fork", repo.dir, map[string]string{"3333333333333333333333333333333333333333": repo.head, prBase: repo.base})
	res := e.input("path", "deploy/web").run() // no kubeconfig: no cluster access
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if !strings.Contains(res.stdout, "no cluster access") {
		t.Errorf("the log does not say the diff is offline:\n%s", res.stdout)
	}
	for _, want := range []string{"-  replicas: 1", "+  replicas: 2", "ConfigMap/web-settings"} {
		if !strings.Contains(res.summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.summary)
		}
	}
	bodies := gh.commentBodies()
	if len(bodies) != 1 || !strings.Contains(bodies[0], marker("deploy-web", "")) {
		t.Errorf("comments %q", bodies)
	}
	if res.outputs["changed"] != "true" {
		t.Errorf("outputs %v", res.outputs)
	}
}

func TestOfflineDiffExplainsAMissingBaseCommit(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	e := newRun(t, gh, "pull_request.fork", repo.dir, map[string]string{"3333333333333333333333333333333333333333": repo.head, prBase: "9999999999999999999999999999999999999999"})
	res := e.input("path", "deploy/web").run()
	if res.code != exitFail {
		t.Fatalf("exit %d, want failure\n%s", res.code, res.stdout)
	}
	if !strings.Contains(res.stdout, "fetch-depth: 0") {
		t.Errorf("the error does not say how to fix it:\n%s", res.stdout)
	}
}
