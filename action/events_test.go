package action

import (
	"fmt"
	"strings"
	"testing"
)

const forkHead = "3333333333333333333333333333333333333333"

// pull_request_target runs the base's workflow with secrets; checkout
// defaults to the base branch. Diffing that and reporting success on the
// PR head would pass a PR nobody looked at.
func TestPullRequestTargetRefusesTheBaseCheckout(t *testing.T) {
	repo := newUnitRepo(t)
	repo.git("checkout", "-q", repo.base) // what actions/checkout does for pull_request_target
	gh := newFakeGitHub(t)
	// An error status on the PR head, and no comment.
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	res := newRun(t, gh, "pull_request_target.fork", repo.dir, map[string]string{forkHead: repo.head, prBase: repo.base}).
		input("path", "deploy/web").run()
	if res.code != exitFail {
		t.Fatalf("exit %d, want failure\n%s", res.code, res.stdout)
	}
	for _, want := range []string{"pull_request_target", "not the pull request's head", "secrets"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the error lacks %q:\n%s", want, res.stdout)
		}
	}
	if st := gh.lastStatus(); st == nil || st["state"] != "error" || st["sha"] != repo.head {
		t.Errorf("status on the PR head %v, want error", st)
	}
	if len(gh.commentBodies()) != 0 {
		t.Errorf("a refused run commented: %q", gh.commentBodies())
	}
}

// With the PR head checked out on purpose, pull_request_target diffs it.
func TestPullRequestTargetWithTheHeadCheckedOut(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.expect(statusCall, commentOn(9))
	res := newRun(t, gh, "pull_request_target.fork", repo.dir, map[string]string{forkHead: repo.head, prBase: repo.base}).
		input("path", "deploy/web").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if !strings.Contains(res.summary, "+  replicas: 2") {
		t.Errorf("summary lacks the PR's change:\n%s", res.summary)
	}
	if st := gh.lastStatus(); st == nil || st["state"] != "success" || st["sha"] != repo.head {
		t.Errorf("status %v", st)
	}
}

// A merge queue asks for checks on the group's head: the group is diffed
// against its base, like a pull request, and the status lands on the
// group's head commit so a required kustomize-deploy/<name> passes.
func TestMergeGroupDiffsTheGroupAgainstItsBase(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expectTimes(2, statusCall) // pending, success; no PR to comment on
	res := newRun(t, gh, "merge_group", repo.dir, map[string]string{pushed: repo.head, prBase: repo.base}).
		input("path", "deploy/web").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	for _, want := range []string{"-  replicas: 1", "+  replicas: 2"} {
		if !strings.Contains(res.summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.summary)
		}
	}
	st := gh.lastStatus()
	if st == nil || st["state"] != "success" || st["sha"] != repo.head || st["context"] != "kustomize-deploy/deploy-web" {
		t.Errorf("status %v", st)
	}
	if gh.count("POST") != 2 || len(gh.commentBodies()) != 0 { // pending, success; no PR to comment on
		t.Errorf("requests %v", gh.requests)
	}
}

// The same unit in two clusters: one comment and one status context each.
// The cluster input (and environment, its deprecated name: the third run)
// keeps one comment and one status per cluster.
func TestClusterSeparatesCommentsAndStatuses(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	// A comment per cluster; prod-eu's second run edits its own.
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(2, commentOn(8))
	gh.expectTimes(1, editCommentCall)
	for i, env := range []string{"prod-eu", "staging", "prod-eu"} {
		input := "cluster"
		if i == 2 {
			input = "environment"
		}
		res := newRun(t, gh, "pull_request.fork", repo.dir, map[string]string{forkHead: repo.head, prBase: repo.base}).
			input("path", "deploy/web").input(input, env).run()
		if res.code != exitOK {
			t.Fatalf("%s: exit %d\n%s", env, res.code, res.stdout)
		}
	}
	bodies := gh.commentBodies()
	if len(bodies) != 2 {
		t.Fatalf("%d comments, want one per cluster: %q", len(bodies), bodies)
	}
	joined := strings.Join(bodies, "\n")
	for _, want := range []string{marker("unit=deploy-web", "prod-eu"), marker("unit=deploy-web", "staging"), "deploy-web (staging)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("comments lack %q", want)
		}
	}
	contexts := map[string]bool{}
	gh.mu.Lock()
	for _, st := range gh.statuses {
		contexts[st["context"].(string)] = true
	}
	gh.mu.Unlock()
	if len(contexts) != 2 || !contexts["kustomize-deploy/prod-eu/deploy-web"] || !contexts["kustomize-deploy/staging/deploy-web"] {
		t.Errorf("status contexts %v", contexts)
	}
}

func TestClusterInputIsChecked(t *testing.T) {
	for name, tc := range map[string]struct {
		in   map[string]string
		want string // in the error; "" no error
		got  string // ClusterName
	}{
		"cluster":                   {in: map[string]string{"INPUT_CLUSTER": "prod-eu"}, got: "prod-eu"},
		"environment, its old name": {in: map[string]string{"INPUT_ENVIRONMENT": "prod-eu"}, got: "prod-eu"},
		"both, the same":            {in: map[string]string{"INPUT_CLUSTER": "prod-eu", "INPUT_ENVIRONMENT": "prod-eu"}, got: "prod-eu"},
		"both, different":           {in: map[string]string{"INPUT_CLUSTER": "prod-eu", "INPUT_ENVIRONMENT": "staging"}, want: "input 'environment': its new name 'cluster' is set too"},
		"a bad cluster":             {in: map[string]string{"INPUT_CLUSTER": "prod -->"}, want: "input 'cluster': want letters"},
		"a bad environment":         {in: map[string]string{"INPUT_ENVIRONMENT": "prod -->"}, want: "input 'environment': want letters"},
	} {
		t.Run(name, func(t *testing.T) {
			tc.in["INPUT_PATH"] = "apps"
			in, err := inputs(tc.in)
			if tc.want == "" {
				if err != nil || in.ClusterName != tc.got {
					t.Errorf("cluster %q, error %v; want %q", in.ClusterName, err, tc.got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// A comment planted with our marker before the first run is left alone;
// ours is a new comment by the token's identity.
func TestPlantedMarkerCommentIsNotTakenOver(t *testing.T) {
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	planted := marker("unit=deploy-web", "") + "\n## kustomize-deploy: deploy-web\nNo changes. Safe to merge."
	id := gh.postComment(8, "mallory", planted) // on the fork's PR
	// Ours is created, then edited; the planted one is never edited.
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	gh.expectTimes(1, commentOn(8))
	gh.expectTimes(1, editCommentCall)
	gh.expectTimes(0, fmt.Sprintf("PATCH /repos/acme/deployments/issues/comments/%d", id))
	for range 2 {
		res := newRun(t, gh, "pull_request.fork", repo.dir, map[string]string{forkHead: repo.head, prBase: repo.base}).
			input("path", "deploy/web").run()
		if res.code != exitOK {
			t.Fatalf("exit %d\n%s", res.code, res.stdout)
		}
	}
	if got := gh.commentBody(id); got != planted {
		t.Errorf("the planted comment was edited:\n%s", got)
	}
	bodies := gh.commentBodies()
	if len(bodies) != 2 || gh.count("PATCH") != 1 {
		t.Errorf("%d comments, %d edits; want the planted one and ours, edited once: %v", len(bodies), gh.count("PATCH"), gh.requests)
	}
}
