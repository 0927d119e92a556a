package action

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// forkReport runs a fork's pull request (an offline diff, with the
// read-only token a fork's run gets) and returns its report file's
// contents, the repository and the run.
func forkReport(t *testing.T) (string, *unitRepo, runResult) {
	t.Helper()
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	gh.forbid = true // a fork's token: every write refused
	res := newRun(t, gh, "pull_request.fork", repo.dir, map[string]string{forkHead: repo.head, prBase: repo.base}).
		input("path", "deploy/web").input("cluster", "prod").run()
	if res.code != exitOK {
		t.Fatalf("fork's run: exit %d\n%s", res.code, res.stdout)
	}
	if res.report == "" {
		t.Fatalf("the fork's run wrote no report (outputs %v)", res.outputs)
	}
	return res.report, repo, res
}

// publishRun is a publish run of a workflow_run event (a file of
// testdata/events) about head, posting the report in contents.
func publishRun(t *testing.T, gh *fakeGitHub, event, head, contents string) *runEnv {
	t.Helper()
	workspace := t.TempDir() // the base repository's workflow: no checkout needed
	writeFile(t, filepath.Join(workspace, "report", "web.report.json"), contents)
	// GITHUB_SHA of a workflow_run is the default branch's head.
	return newRun(t, gh, event, workspace, map[string]string{forkHead: head, pushed: "5555555555555555555555555555555555555555"}).
		input("mode", "publish").input("report", "report/web.report.json")
}

// A fork's pull request run writes its report: what publish needs, the
// results with their diffs, the PR and head commit it is about.
func TestForkPullRequestWritesItsReport(t *testing.T) {
	contents, repo, res := forkReport(t)
	if want := "kustomize-deploy-diffs/deploy-web.prod.report.json"; res.outputs["report-file"] != want {
		t.Errorf("report-file %q, want %q", res.outputs["report-file"], want)
	}
	if !strings.Contains(res.stdout, "read-only token") {
		t.Errorf("the fork's run does not warn that it could not post:\n%s", res.stdout)
	}
	rep, err := readReport(filepath.Join(repo.dir, res.outputs["report-file"]))
	if err != nil {
		t.Fatalf("the report does not read back: %v\n%s", err, contents)
	}
	if rep.PullRequest != 8 || rep.HeadSHA != repo.head || rep.Marker != marker("unit=deploy-web", "prod") || rep.Title != "deploy-web (prod)" {
		t.Errorf("report about #%d at %s, marker %q, title %q", rep.PullRequest, rep.HeadSHA, rep.Marker, rep.Title)
	}
	if len(rep.Results) != 1 || rep.Clusters["deploy-web"] != "prod" || !strings.Contains(contents, `+  replicas: 2`) {
		t.Errorf("report results %d, clusters %v:\n%s", len(rep.Results), rep.Clusters, contents)
	}
}

// A push writes no report: only a pull request's diff is published.
func TestPushWritesNoReport(t *testing.T) {
	ns := cluster.Namespace(t)
	repo := newUnitRepo(t)
	gh := newFakeGitHub(t)
	res := repo.run(t, gh, "push", ns).run()
	if res.code != exitOK || res.outputs["report-file"] != "" {
		t.Errorf("exit %d, report-file %q\n%s", res.code, res.outputs["report-file"], res.stdout)
	}
}

// The base repository's workflow_run workflow posts the fork's comment
// and status: the PR found through the API (GitHub lists none in the
// event for a fork), on the head commit of the event.
func TestPublishPostsAForksCommentAndStatus(t *testing.T) {
	contents, repo, _ := forkReport(t)
	gh := newFakeGitHub(t)
	gh.open = []openPR{
		{number: 8, headRepo: "contributor/deployments", branch: "scale-web", sha: repo.head},
		{number: 9, headRepo: "someone/deployments", branch: "scale-web", sha: repo.head},
	}
	gh.onlyExpectedWrites()
	gh.expectTimes(1, commentOn(8))
	gh.expectTimes(1, statusCall)
	res := publishRun(t, gh, "workflow_run.fork", repo.head, contents).run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	bodies := gh.commentBodies()
	if len(bodies) != 1 || !strings.HasPrefix(bodies[0], marker("unit=deploy-web", "prod")) || !strings.Contains(bodies[0], "+  replicas: 2") {
		t.Errorf("comments %q", bodies)
	}
	st := gh.lastStatus()
	if st["context"] != "kustomize-deploy/prod/deploy-web" || st["sha"] != repo.head || st["state"] != "success" ||
		st["target_url"] != "https://github.com/acme/deployments/actions/runs/5151" {
		t.Errorf("status %v", st)
	}
	if res.outputs["changed"] != "true" || !strings.Contains(res.summary, "deploy-web (prod)") {
		t.Errorf("outputs %v\nsummary:\n%s", res.outputs, res.summary)
	}
}

// A branch of the base repository: GitHub lists the pull request in the
// event, and no API call looks for it.
func TestPublishTakesThePullRequestTheEventLists(t *testing.T) {
	contents, repo, _ := forkReport(t)
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expectTimes(1, commentOn(8))
	gh.expectTimes(1, statusCall)
	gh.expectTimes(0, "GET /repos/acme/deployments/pulls")
	if res := publishRun(t, gh, "workflow_run", repo.head, contents).run(); res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
}

// A report is the fork's word: one about another pull request or commit
// than the event's is refused, and nothing is posted.
func TestPublishRefusesAReportOfAnotherPullRequest(t *testing.T) {
	contents, repo, _ := forkReport(t)
	var rep map[string]any
	if err := json.Unmarshal([]byte(contents), &rep); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(map[string]any){
		"another pull request": func(r map[string]any) { r["pullRequest"] = 9 },
		"another commit":       func(r map[string]any) { r["headSha"] = strings.Repeat("a", 40) },
	} {
		t.Run(name, func(t *testing.T) {
			forged := map[string]any{}
			for k, v := range rep {
				forged[k] = v
			}
			change(forged)
			data, _ := json.Marshal(forged)
			gh := newFakeGitHub(t)
			gh.open = []openPR{{number: 8, headRepo: "contributor/deployments", branch: "scale-web", sha: repo.head}}
			gh.onlyExpectedWrites() // no write at all
			res := publishRun(t, gh, "workflow_run.fork", repo.head, string(data)).run()
			if res.code != exitFail || !strings.Contains(res.stdout, "refused, nothing posted") {
				t.Errorf("exit %d\n%s", res.code, res.stdout)
			}
			if gh.count("POST")+gh.count("PATCH") > 0 {
				t.Errorf("posted: %v", gh.requests)
			}
		})
	}
}

// A report that is not one this release wrote is refused, naming the
// input, before anything is asked of GitHub.
func TestPublishRefusesAMalformedReport(t *testing.T) {
	contents, repo, _ := forkReport(t)
	edit := func(old, new string) string {
		if !strings.Contains(contents, old) {
			t.Fatalf("the report lacks %q:\n%s", old, contents)
		}
		return strings.Replace(contents, old, new, 1)
	}
	for name, tc := range map[string]struct{ report, want string }{
		"not JSON":              {"<html>", "not a report of this action"},
		"an unknown field":      {edit(`"version":1,`, `"version":1,"body":"**approved**",`), `unknown field "body"`},
		"an unknown field deep": {edit(`"unit":"deploy-web",`, `"unit":"deploy-web","html":"x",`), `unknown field "html"`},
		"another version":       {edit(`"version":1,`, `"version":2,`), "format version 2"},
		"trailing data":         {contents + `{"version":1}`, "data after the report"},
		"oversized":             {`{"title":"` + strings.Repeat("x", maxReport) + `"}`, "larger than 10 MB"},
		"a marker ending the HTML comment": {edit(`"marker":"\u003c!-- kustomize-deploy:unit=deploy-web`, `"marker":"\u003c!-- --\u003e **hi** \u003c!-- kustomize-deploy:unit=deploy-web`),
			"not a kustomize-deploy comment marker"},
		"a unit name leaving kustomize-deploy/": {edit(`"unit":"deploy-web",`, `"unit":"../../ci/required",`), "is not a unit name"},
		"a cluster of no unit":                  {edit(`"clusters":{"deploy-web":"prod"}`, `"clusters":{"deploy-web":"prod","x":"y"}`), `names unit "x"`},
		"another mode":                          {edit(`"mode":"diff"`, `"mode":"apply"`), `mode "apply"`},
	} {
		t.Run(name, func(t *testing.T) {
			gh := newFakeGitHub(t)
			gh.open = []openPR{{number: 8, headRepo: "contributor/deployments", branch: "scale-web", sha: repo.head}}
			gh.onlyExpectedWrites()
			res := publishRun(t, gh, "workflow_run.fork", repo.head, tc.report).run()
			if res.code != exitFail || !strings.Contains(res.stdout, "input 'report'") || !strings.Contains(res.stdout, tc.want) {
				t.Errorf("exit %d, want a failure naming input 'report' and saying %q:\n%.2000s", res.code, tc.want, res.stdout)
			}
			if n := len(gh.requests); n > 0 {
				t.Errorf("%d request(s) to GitHub: %v", n, gh.requests)
			}
		})
	}
}

// Publish only runs on a workflow_run event: elsewhere it would have no
// pull request and commit but the report's.
func TestPublishNeedsAWorkflowRunEvent(t *testing.T) {
	contents, repo, _ := forkReport(t)
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	workspace := t.TempDir()
	writeFile(t, filepath.Join(workspace, "web.report.json"), contents)
	res := newRun(t, gh, "pull_request.fork", workspace, map[string]string{forkHead: repo.head}).
		input("mode", "publish").input("report", "web.report.json").run()
	if res.code != exitFail || !strings.Contains(res.stdout, "runs on a workflow_run event") {
		t.Errorf("exit %d\n%s", res.code, res.stdout)
	}
}

// Mode publish builds nothing: the inputs that say what to build or
// where are refused, and report is required.
func TestPublishInputs(t *testing.T) {
	t.Parallel()
	_, err := inputs(map[string]string{"INPUT_MODE": "publish", "INPUT_PATH": "apps", "INPUT_KUBECONFIG": "x"})
	for _, want := range []string{"input 'report': required with mode publish", "input 'path': not with mode publish", "input 'kubeconfig': not with mode publish"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	if _, err := inputs(map[string]string{"INPUT_PATH": "apps", "INPUT_REPORT": "r.json"}); err == nil || !strings.Contains(err.Error(), "input 'report': only with mode publish") {
		t.Errorf("report without mode publish: %v", err)
	}
	if _, err := os.Stat("../testdata/events/workflow_run.fork.json"); err != nil {
		t.Fatal(err)
	}
}

// A fork's pull request run that fails before any unit has a result (its
// configuration does not read, an input is refused) still writes a
// report: one failed result, the configuration's. Publish posts it as the
// run's own status would be, config:<path>, and as the comment, so the
// fork's pull request sees the failure instead of nothing.
func TestForkRunFailingEarlyIsPublished(t *testing.T) {
	g := newGitRepo(t)
	g.write("clusters/prod/units.yaml", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: [unclosed\n")
	head := g.commit("a broken configuration")
	for _, tc := range []struct {
		name    string
		timeout string // the timeout input, refused with config
		want    string // in the result's message
	}{
		{name: "configuration unreadable", want: "units.yaml"},
		{name: "input refused", timeout: "60s", want: "input 'timeout'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fork := newFakeGitHub(t)
			fork.forbid = true // a fork's token: every write refused
			e := newRun(t, fork, "pull_request.fork", g.dir, map[string]string{forkHead: head, prBase: head}).input("config", "clusters/prod/")
			delete(e.vars, "INPUT_TIMEOUT")
			if tc.timeout != "" {
				e.input("timeout", tc.timeout)
			}
			res := e.run()
			if res.code != exitFail {
				t.Fatalf("fork's run: exit %d, want a failure\n%s", res.code, res.stdout)
			}
			if want := "kustomize-deploy-diffs/clusters-prod.report.json"; res.outputs["report-file"] != want {
				t.Fatalf("report-file %q, want %q\n%s", res.outputs["report-file"], want, res.stdout)
			}
			rep, err := readReport(filepath.Join(g.dir, res.outputs["report-file"]))
			if err != nil {
				t.Fatalf("the report does not read back: %v\n%s", err, res.report)
			}
			if rep.Config != "clusters/prod" || len(rep.Results) != 1 || rep.Results[0].Ready || !strings.Contains(rep.Results[0].Message, tc.want) ||
				rep.Marker != marker("config=clusters/prod", "") || rep.PullRequest != 8 || rep.HeadSHA != head {
				t.Errorf("report:\n%s", res.report)
			}

			gh := newFakeGitHub(t)
			gh.open = []openPR{{number: 8, headRepo: "contributor/deployments", branch: "scale-web", sha: head}}
			gh.onlyExpectedWrites()
			gh.expectTimes(1, commentOn(8))
			gh.expectTimes(1, statusCall)
			pub := publishRun(t, gh, "workflow_run.fork", head, res.report).run()
			if pub.code != exitOK {
				t.Fatalf("publish: exit %d\n%s", pub.code, pub.stdout)
			}
			st := gh.lastStatus()
			if st["context"] != "kustomize-deploy/config:clusters/prod" || st["state"] != "failure" || st["sha"] != head {
				t.Errorf("status %v", st)
			}
			if bodies := gh.commentBodies(); len(bodies) != 1 || !strings.Contains(bodies[0], "Failed") {
				t.Errorf("comments %q", bodies)
			}
		})
	}
}

// A report naming a configuration is of one result, and its path is a
// path: publish takes nothing else for a status context.
func TestPublishRefusesABadConfigReport(t *testing.T) {
	for _, config := range []string{"../elsewhere", "/abs", "a//b", "a/./b", "x\ny"} {
		rep := prReport{Version: reportVersion, PullRequest: 8, HeadSHA: strings.Repeat("a", 40), Marker: marker("config=x", ""), Config: config,
			Results: []*result.Result{{Unit: "x", Mode: result.ModeDiff}}}
		if err := checkReport(&rep); err == nil {
			t.Errorf("config %q taken", config)
		}
	}
	rep := prReport{Version: reportVersion, PullRequest: 8, HeadSHA: strings.Repeat("a", 40), Marker: marker("config=x", ""), Config: "clusters/.prod",
		Results: []*result.Result{{Unit: "x", Mode: result.ModeDiff}}}
	if err := checkReport(&rep); err != nil {
		t.Errorf("a good config report refused: %v", err)
	}
	rep.Results = append(rep.Results, &result.Result{Unit: "y", Mode: result.ModeDiff})
	if err := checkReport(&rep); err == nil {
		t.Error("a config report of two results taken")
	}
}
