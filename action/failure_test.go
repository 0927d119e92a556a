package action

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

const leakyToken = "ghp_kubeconfigLeak0123456789abcdef"

// A kubeconfig input that does not parse is reported without any of its
// contents: parser errors quote the value they choke on.
func TestKubeconfigInputIsNeverPrinted(t *testing.T) {
	for name, input := range map[string]string{
		"one line, not a file": "token: " + leakyToken,
		"broken YAML":          "apiVersion: v1\nkind: Config\nusers:\n- name: ci\n  user:\n    token: [" + leakyToken + "\n",
		"wrong type":           "apiVersion: v1\nkind: Config\nusers: " + leakyToken + "\n",
		"JSON":                 `{"apiVersion": "v1", "users": "` + leakyToken + `"`,
	} {
		t.Run(name, func(t *testing.T) {
			repo := newUnitRepo(t)
			gh := newFakeGitHub(t)
			gh.onlyExpectedWrites()
			gh.expect(statusCall) // the failure, on the commit; no comment on a push
			e := newRun(t, gh, "push", repo.dir, map[string]string{pushed: repo.head})
			res := e.input("path", "deploy/web").input("kubeconfig", input).run()
			if res.code != exitFail {
				t.Fatalf("exit %d, want failure\n%s", res.code, res.stdout)
			}
			if !strings.Contains(res.stdout, "input 'kubeconfig'") {
				t.Errorf("the error does not name the input:\n%s", res.stdout)
			}
			all := res.stdout + res.summary + strings.Join(values(res.outputs), "\n") + strings.Join(gh.commentBodies(), "\n")
			if strings.Contains(all, leakyToken) || strings.Contains(all, leakyToken[:12]) {
				t.Errorf("the kubeconfig input leaks:\n%s", all)
			}
		})
	}
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// A run that fails before the unit runs still sets every output.
func TestOutputsAreSetWhenTheRunFails(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	res := newRun(t, gh, "push", repo.dir, map[string]string{pushed: repo.head}).
		input("path", "deploy/web").input("timeout", "soon").run()
	if res.code != exitFail {
		t.Fatalf("exit %d, want failure", res.code)
	}
	for _, name := range []string{"result", "changed", "drifted", "revision", "objects", "diff-file", "reason", "failed-units"} {
		if _, ok := res.outputs[name]; !ok {
			t.Errorf("output %s not set: %v", name, res.outputs)
		}
	}
	var got result.Result
	if err := json.Unmarshal([]byte(res.outputs["result"]), &got); err != nil {
		t.Fatalf("result output %q: %v", res.outputs["result"], err)
	}
	if got.Ready || !strings.Contains(got.Message, "'timeout'") || res.outputs["changed"] != "false" || res.outputs["objects"] != "0" ||
		res.outputs["reason"] != "Failed" || res.outputs["failed-units"] != got.Unit {
		t.Errorf("outputs of a failed run: %v", res.outputs)
	}
}

// Without GITHUB_OUTPUT and GITHUB_STEP_SUMMARY (a local run, a broken
// runner) the run warns and goes on; go-githubactions would panic.
func TestNoOutputFilesIsAWarning(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.expect(statusCall, commentOn(8))
	e := newRun(t, gh, "pull_request.fork", repo.dir, map[string]string{"3333333333333333333333333333333333333333": repo.head, prBase: repo.base})
	delete(e.vars, "GITHUB_OUTPUT")
	delete(e.vars, "GITHUB_STEP_SUMMARY")
	res := e.input("path", "deploy/web").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	for _, want := range []string{"::warning::GITHUB_OUTPUT is not set", "::warning::GITHUB_STEP_SUMMARY is not set"} {
		if strings.Count(res.stdout, want) != 1 {
			t.Errorf("log lacks one %q:\n%s", want, res.stdout)
		}
	}
	if st := gh.lastStatus(); st == nil || st["state"] != "success" {
		t.Errorf("final status %v", st)
	}
}

// A cancelled run (the job was cancelled: SIGTERM) still replaces its
// pending status: the final status has a context of its own.
func TestCancelledRunLeavesNoPendingStatus(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	e := repo.run(t, gh, "push", ns)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.ctx = ctx
	res := e.run()
	if res.code != exitFail {
		t.Fatalf("a cancelled run succeeded\n%s", res.stdout)
	}
	st := gh.lastStatus()
	if st == nil || st["state"] == "pending" || st["sha"] != repo.head {
		t.Errorf("the last status of a cancelled run is %v, want failure or error", st)
	}
	if res.outputs["result"] == "" {
		t.Errorf("outputs of a cancelled run: %v", res.outputs)
	}
}

// GitHub answering 502 once is retried, not reported.
func TestGitHubServerErrorIsRetried(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.fail, gh.failN = 502, 1 // the pending status
	// The pending status twice (502, then its retry), then success.
	gh.expectTimes(3, statusCall)
	gh.expectTimes(1, commentOn(8))
	e := newRun(t, gh, "pull_request.fork", repo.dir, map[string]string{"3333333333333333333333333333333333333333": repo.head, prBase: repo.base})
	res := e.input("path", "deploy/web").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if strings.Contains(res.stdout, "::warning::setting the commit status") {
		t.Errorf("a retried 502 was reported:\n%s", res.stdout)
	}
	gh.mu.Lock()
	defer gh.mu.Unlock()
	if n := len(gh.statuses); n != 2 {
		t.Errorf("%d statuses recorded, want pending and success: %v", n, gh.statuses)
	}
}

// A kubeconfig given as contents is written to the run's temp dir
// (Env.TempDir: the command gives it RUNNER_TEMP when that exists), never
// to the variable's path when it does not, and removed afterwards.
func TestKubeconfigContentsInTheRunsTempDir(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	contents, err := os.ReadFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	e := repo.run(t, gh, "push", ns).input("kubeconfig", string(contents)).input("wait", "false")
	res := e.run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	left, err := os.ReadDir(e.tempDir)
	if err != nil || len(left) != 0 {
		t.Errorf("temp dir after the run: %v %v", left, err)
	}
}
