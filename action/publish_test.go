package action

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
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
		// The forged counts of a report that lists a change: "No changes"
		// above it, or entries said to be left out that are listed.
		"counts that are not the entries'": {forge(t, contents, func(r *result.Result) { r.Counts = result.Counts{} }),
			`unit "deploy-web": its counts (0 created, 0 configured, 0 deleted`},
		"entries left out and listed": {forge(t, contents, func(r *result.Result) { r.Counts, r.EntriesOmitted = result.Counts{}, 1 }),
			`unit "deploy-web": 1 entries left out, and 2 listed`},
		"counts not adding up to the entries left out": {forge(t, contents, func(r *result.Result) { r.EntriesOmitted, r.Entries = 5, nil }),
			"not to the 5 entries left out"},
		"a negative count": {forge(t, contents, func(r *result.Result) { r.Counts.Deleted = -1; r.Counts.Configured++ }), "a negative count"},
		"an action no run takes": {forge(t, contents, func(r *result.Result) { r.Entries[0].Action = "approved" }),
			`entries[0]: action "approved" is not one a run takes`},
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

// forge is the report contents with its first result changed by edit.
func forge(t *testing.T, contents string, edit func(*result.Result)) string {
	t.Helper()
	var rep prReport
	if err := json.Unmarshal([]byte(contents), &rep); err != nil {
		t.Fatal(err)
	}
	edit(rep.Results[0])
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
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

// A fork's report that floods: a thousand invented units (the most a
// report may hold), each pruning twenty volumes in twenty namespaces
// (risky items, never left out of a comment, and not grouped together). Publish posts at most commentPages comments and
// maxStatuses statuses: the first units' own, and one for the rest that
// counts them.
func TestPublishBoundsAFloodReport(t *testing.T) {
	contents, repo, _ := forkReport(t)
	var rep prReport
	if err := json.Unmarshal([]byte(contents), &rep); err != nil {
		t.Fatal(err)
	}
	one := rep.Results[0]
	rep.Results, rep.Clusters = nil, map[string]string{}
	for i := range maxReportUnits {
		res := *one
		res.Unit = fmt.Sprintf("unit-%04d", i)
		res.Entries = nil
		for j := range 20 {
			res.Entries = append(res.Entries, result.Entry{Object: object.ID{Kind: "PersistentVolumeClaim", Namespace: fmt.Sprintf("shop-%02d", j), Name: fmt.Sprintf("data-%04d", i)},
				Stage: result.StagePrune, Action: result.Deleted, Source: "deploy/web/pvc.yaml"})
		}
		if i%10 == 0 {
			res.Ready, res.Reason, res.Message = false, result.ReasonApplyFailed, "failed"
		}
		res.Tally()
		rep.Results = append(rep.Results, &res)
		rep.Clusters[res.Unit] = "prod"
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	gh := newFakeGitHub(t)
	gh.open = []openPR{{number: 8, headRepo: "contributor/deployments", branch: "scale-web", sha: repo.head}}
	gh.onlyExpectedWrites()
	gh.expectBetween(1, commentPages, commentOn(8))
	gh.expectBetween(maxStatuses, maxStatuses+3, statusCall) // the rest's status set when its state changes, and at the end
	res := publishRun(t, gh, "workflow_run.fork", repo.head, string(data)).run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%.3000s", res.code, res.stdout)
	}
	bodies := gh.commentBodies()
	last := ""
	for _, b := range bodies {
		if strings.HasPrefix(b, github.PageMarker(rep.Marker, commentPages)+"\n") {
			last = b
		}
	}
	if len(bodies) != commentPages || !strings.Contains(last, "**Truncated:**") {
		t.Errorf("%d comments, the last ending %q", len(bodies), last[max(0, len(last)-200):])
	}
	contexts := map[any]bool{}
	gh.mu.Lock()
	for _, st := range gh.statuses {
		contexts[st["context"]] = true
	}
	gh.mu.Unlock()
	if len(contexts) != maxStatuses {
		t.Errorf("%d status contexts, want %d", len(contexts), maxStatuses)
	}
	if st := gh.lastStatusOf("kustomize-deploy/prod/unit-0098"); st == nil || st["state"] != "success" {
		t.Errorf("unit-0098's own status %v", st)
	}
	if st := gh.lastStatusOf("kustomize-deploy/prod/unit-0099"); st != nil {
		t.Errorf("unit-0099, beyond the cap, has a status of its own: %v", st)
	}
	rest := gh.lastStatusOf("kustomize-deploy/more units")
	if rest == nil || rest["state"] != "failure" || rest["description"] != "901 more units (a run sets at most 100 statuses): 90 failed, 0 pending, 811 succeeded; see the job summary" {
		t.Errorf("the rest's status %v", rest)
	}
}

// A manifest's value holding another unit's comment marker (a diff
// quotes it) does not make that unit's comment this one: publishing the
// report of unit deploy-web, whose diff quotes api's marker, leaves api's
// comment alone and makes its own; the quoted marker is broken up.
func TestPublishKeepsAQuotedMarkerInert(t *testing.T) {
	contents, repo, _ := forkReport(t)
	apiMarker := marker("unit=api", "prod")
	forged := forge(t, contents, func(r *result.Result) {
		r.Entries[0].Diff += "+  note: " + apiMarker + "\n"
	})
	gh := newFakeGitHub(t)
	gh.open = []openPR{{number: 8, headRepo: "contributor/deployments", branch: "scale-web", sha: repo.head}}
	login := "github-actions[bot]"
	api := gh.postComment(8, login, apiMarker+"\napi's diff")
	gh.postComment(8, login, marker("unit=other", "prod")+"\n```diff\n+  note: "+marker("unit=deploy-web", "prod")+"\n```\n")
	gh.onlyExpectedWrites()
	gh.expectTimes(1, commentOn(8))
	gh.expectTimes(1, statusCall)
	gh.expectTimes(0, editCommentCall)
	gh.expectTimes(0, deleteCommentCall)
	res := publishRun(t, gh, "workflow_run.fork", repo.head, forged).run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if got := gh.commentBody(api); got != apiMarker+"\napi's diff" {
		t.Errorf("api's comment is now %q", got)
	}
	mine := ""
	for _, b := range gh.commentBodies() {
		if strings.HasPrefix(b, marker("unit=deploy-web", "prod")+"\n") {
			mine = b
		}
	}
	if strings.Contains(mine, apiMarker) || !strings.Contains(mine, "<!-\u200b- kustomize-deploy:unit=api cluster=prod -->") {
		t.Errorf("the new comment:\n%s", mine)
	}
}

// A fork's report title and file names mention nobody and link nowhere
// in the comment publish posts.
func TestPublishKeepsMentionsInert(t *testing.T) {
	contents, repo, _ := forkReport(t)
	var rep prReport
	if err := json.Unmarshal([]byte(contents), &rep); err != nil {
		t.Fatal(err)
	}
	rep.Title = "@acme/everyone see https://evil.example #1"
	rep.Results[0].Entries[0].Source = "deploy/@octocat.yaml"
	rep.Results[0].Notes = append(rep.Results[0].Notes, "cc @acme/security www.evil.example")
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	gh := newFakeGitHub(t)
	gh.open = []openPR{{number: 8, headRepo: "contributor/deployments", branch: "scale-web", sha: repo.head}}
	res := publishRun(t, gh, "workflow_run.fork", repo.head, string(data)).run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	body := strings.Join(gh.commentBodies(), "\n")
	for _, live := range []string{"@acme/everyone", "https://evil", "#1", "@octocat", "@acme/security", "www.evil"} {
		if strings.Contains(body, live) {
			t.Errorf("%q is live in the comment:\n%s", live, body)
		}
	}
	if !strings.Contains(body, "@\u200bacme/everyone see https:\u200b//evil.example #\u200b1") {
		t.Errorf("the title is not shown:\n%s", body)
	}
}
