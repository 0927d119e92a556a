package release

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.test",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.test", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A tag on a commit merged to main passes; one on a branch that never
// reached main does not, and the error says why.
func TestCheckOnMain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	merged := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	git(t, dir, "checkout", "-q", "-b", "feature", merged)
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "not merged")
	branch := git(t, dir, "rev-parse", "HEAD")
	ctx := context.Background()

	if err := CheckOnMain(ctx, dir, merged, "main"); err != nil {
		t.Errorf("an ancestor of main: %v", err)
	}
	err := CheckOnMain(ctx, dir, branch, "main")
	if err == nil || !strings.Contains(err.Error(), "commit "+branch+" is not on main") {
		t.Errorf("a commit only on a branch: %v", err)
	}
	// A ref that does not exist is an error of its own, not "not on main".
	err = CheckOnMain(ctx, dir, merged, "origin/main")
	if err == nil || strings.Contains(err.Error(), "is not on") {
		t.Errorf("a missing main ref: %v", err)
	}
}

// fakeRuns answers the workflow-runs API with one response per call (the
// last one repeated), checking what the gate asks for.
func fakeRuns(t *testing.T, responses ...[]workflowRun) (*httptest.Server, func() int) {
	t.Helper()
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/repos/acme/kd/actions/workflows/ci.yml/runs" || r.URL.Query().Get("head_sha") != "abc123" {
			t.Errorf("unexpected request %s", r.URL)
			http.NotFound(w, r)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer t0ken" {
			t.Errorf("Authorization %q", got)
		}
		mu.Lock()
		i := min(calls, len(responses)-1)
		calls++
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"total_count": len(responses[i]), "workflow_runs": responses[i]})
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return calls }
}

func gate(url string) CIGate {
	g := DefaultCIGate()
	g.APIURL, g.Token, g.Repository, g.Commit = url, "t0ken", "acme/kd", "abc123"
	g.Wait, g.Poll = 2*time.Second, 10*time.Millisecond
	return g
}

func TestCIGate(t *testing.T) {
	t.Parallel()
	passed := workflowRun{HTMLURL: "https://gh.test/run/1", Event: "push", Status: "completed", Conclusion: "success"}
	failed := workflowRun{HTMLURL: "https://gh.test/run/2", Event: "push", Status: "completed", Conclusion: "failure"}
	running := workflowRun{HTMLURL: "https://gh.test/run/3", Event: "push", Status: "in_progress"}
	for name, tc := range map[string]struct {
		responses [][]workflowRun
		wait      time.Duration
		want      string // "" passes
		minCalls  int
	}{
		"passed":                        {responses: [][]workflowRun{{passed}}, minCalls: 1},
		"a failed run and a passed one": {responses: [][]workflowRun{{failed, passed}}, minCalls: 1},
		"failed":                        {responses: [][]workflowRun{{failed}}, want: "workflow ci.yml did not pass for commit abc123: https://gh.test/run/2 (push) failure"},
		"waits for the run to finish":   {responses: [][]workflowRun{{running}, {running}, {passed}}, minCalls: 3},
		"waits for the run to appear":   {responses: [][]workflowRun{{}, {running}, {passed}}, minCalls: 3},
		"fails once the running run failed": {responses: [][]workflowRun{{running}, {failed}},
			want: "did not pass for commit abc123: https://gh.test/run/2 (push) failure"},
		"still running at the deadline": {responses: [][]workflowRun{{running}}, wait: 100 * time.Millisecond,
			want: "has not passed for commit abc123 after 100ms: https://gh.test/run/3 (push) in_progress"},
		"never ran": {responses: [][]workflowRun{{}}, wait: 100 * time.Millisecond,
			want: "has no run for commit abc123 after 100ms: push the commit to main"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, calls := fakeRuns(t, tc.responses...)
			g := gate(srv.URL)
			if tc.wait != 0 {
				g.Wait = tc.wait
			}
			err := g.WaitForCI(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("want a pass, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
			if calls() < tc.minCalls {
				t.Errorf("%d calls, want at least %d", calls(), tc.minCalls)
			}
		})
	}
}

// An API error stops the gate at once, naming the status; the token is
// not in it.
func TestCIGateAPIError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"message":"Resource not accessible by integration"}`, http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	err := gate(srv.URL).WaitForCI(context.Background())
	if err == nil || !strings.Contains(err.Error(), "403 Forbidden") || !strings.Contains(err.Error(), "Resource not accessible") {
		t.Errorf("got %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "t0ken") {
		t.Errorf("the error leaks the token: %v", err)
	}
}
