package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

var (
	cluster *testcluster.Cluster
	// webhook authenticates EKS tokens for the cluster (see eks_test.go).
	webhook *tokenWebhook
)

func TestMain(m *testing.M) {
	webhook = newTokenWebhook()
	os.Exit(testcluster.MainWith(m, &cluster, testcluster.Options{TokenWebhook: webhook.config()}))
}

// fakeGitHub is a GitHub REST API on 127.0.0.1 that keeps issues, issue
// comments, labels and commit statuses in memory and records every
// request. Like GitHub, it refuses GET /user to an installation token (the
// workflow's ghs_ token) and names its bot through GraphQL's viewer;
// comments and issues it creates are by "github-actions[bot]".
type fakeGitHub struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests []string // "METHOD path"
	// sent is every request as received: "METHOD URI", a newline, the
	// body.
	sent     []string
	auth     []string
	comments map[int64]comment
	nextID   int64
	issues   map[int]*issue
	labels   map[string]bool
	statuses []map[string]any // with "sha"
	// dispatches are the repository_dispatch events sent.
	dispatches []map[string]any
	forbid     bool // answer every write with 403
	// open are the open pull requests (GET /repos/…/pulls, filtered by
	// head=OWNER:BRANCH as GitHub does).
	open []openPR
	// merged maps a commit to the labels of the merged pull request that
	// contains it (GET /repos/…/commits/{sha}/pulls).
	merged map[string][]string
	// forbidIssues answers every request about issues and labels, reads
	// too, with 403: a token without "issues: read" on a private
	// repository.
	forbidIssues bool
	// fail answers the next failN requests (any but GET /user and
	// GraphQL) with this status.
	fail  int
	failN int

	// expected are the calls the test declared (expect, expectTimes):
	// at its end the test fails if one was not made as often as said.
	expected []*expectation
	// strict fails the test on any write no expectation names (see
	// onlyExpectedWrites).
	strict bool
}

// The calls tests declare with expect, expectTimes and onlyExpectedWrites.
const (
	statusCall        = "POST /repos/acme/deployments/statuses/*"
	commentCall       = "POST /repos/acme/deployments/issues/*/comments"
	editCommentCall   = "PATCH /repos/acme/deployments/issues/comments/*"
	deleteCommentCall = "DELETE /repos/acme/deployments/issues/comments/*"
	openIssueCall     = "POST /repos/acme/deployments/issues"
	editIssueCall     = "PATCH /repos/acme/deployments/issues/*"
	labelCall         = "POST /repos/acme/deployments/labels"
	mergedPullsCall   = "GET /repos/acme/deployments/commits/*/pulls"
)

// commentOn is a new comment on pull request or issue n.
func commentOn(n int) string {
	return fmt.Sprintf("POST /repos/acme/deployments/issues/%d/comments", n)
}

// editIssue is an edit of issue n (its body, or closing it).
func editIssue(n int) string { return fmt.Sprintf("PATCH /repos/acme/deployments/issues/%d", n) }

// expectation is a call a test declares: a method and a path pattern
// (path.Match: "*" stands for one segment, a SHA or a number), made at
// least min times and at most max (max < 0: no bound; else max == min).
type expectation struct {
	method, pattern string
	min, max        int
}

func (e *expectation) matches(request string) bool {
	method, p, _ := strings.Cut(request, " ")
	ok, _ := path.Match(e.pattern, p)
	return ok && method == e.method
}

func (e *expectation) String() string { return e.method + " " + e.pattern }

// expect declares calls the test must make, each at least once, as
// "METHOD /path" with * for a segment that varies:
// gh.expect("POST /repos/acme/deployments/statuses/*").
func (g *fakeGitHub) expect(calls ...string) {
	for _, c := range calls {
		g.expectBetween(1, -1, c)
	}
}

// expectTimes declares a call the test must make exactly n times; 0 says
// it must never be made.
func (g *fakeGitHub) expectTimes(n int, call string) { g.expectBetween(n, n, call) }

func (g *fakeGitHub) expectBetween(lo, hi int, call string) {
	method, pattern, ok := strings.Cut(call, " ")
	if !ok || !strings.HasPrefix(pattern, "/") {
		panic(fmt.Sprintf("expectation %q: want \"METHOD /path\"", call))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expected = append(g.expected, &expectation{method: method, pattern: pattern, min: lo, max: hi})
}

// onlyExpectedWrites fails the test on any write (a request other than
// GET; GraphQL's viewer query aside) that no expectation names: for runs
// that must comment, set statuses or touch issues only as declared.
func (g *fakeGitHub) onlyExpectedWrites() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.strict = true
}

// unmet checks the calls made against the expectations, as
// internal/github's stub registry does at the end of each test: one
// message for each expectation not met and each write not expected.
func (g *fakeGitHub) unmet() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, e := range g.expected {
		n := 0
		for _, r := range g.requests {
			if e.matches(r) {
				n++
			}
		}
		switch {
		case n < e.min && n == 0:
			out = append(out, fmt.Sprintf("expected GitHub call %s was not made", e))
		case n < e.min || (e.max >= 0 && n > e.max):
			want := fmt.Sprintf("%d time(s)", e.min)
			if e.max < 0 {
				want = "at least " + want
			}
			out = append(out, fmt.Sprintf("GitHub call %s was made %d time(s), expected %s", e, n, want))
		}
	}
	if !g.strict {
		return out
	}
	for _, r := range g.requests {
		if strings.HasPrefix(r, http.MethodGet+" ") || r == http.MethodPost+" /graphql" {
			continue
		}
		if !slices.ContainsFunc(g.expected, func(e *expectation) bool { return e.matches(r) }) {
			out = append(out, "unexpected GitHub write "+r)
		}
	}
	return out
}

// openPR is an open pull request: its number, and its head branch,
// repository and commit.
type openPR struct {
	number                int
	headRepo, branch, sha string
}

// comment is an issue (or pull request) comment, its author and where.
type comment struct {
	body, author string
	issue        int
}

// issue is an issue and who opened it.
type issue struct {
	number              int
	title, body, author string
	state, stateReason  string
	labels              []string
}

func (is *issue) json() map[string]any {
	labels := []map[string]any{}
	for _, l := range is.labels {
		labels = append(labels, map[string]any{"name": l})
	}
	return map[string]any{"number": is.number, "title": is.title, "body": is.body, "state": is.state, "state_reason": is.stateReason,
		"user": map[string]any{"login": is.author}, "labels": labels, "html_url": fmt.Sprintf("https://github.com/acme/deployments/issues/%d", is.number)}
}

// listIssues answers GET /repos/acme/deployments/issues: state (open by
// default) and every label of labels (comma separated), oldest first with
// direction=asc, as GitHub does; no pull requests.
func (g *fakeGitHub) listIssues(q url.Values) []map[string]any {
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	list := []map[string]any{}
	for _, is := range g.issues {
		if state != "all" && is.state != state {
			continue
		}
		if !containsAll(is.labels, want) {
			continue
		}
		list = append(list, is.json())
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i]["number"].(int), list[j]["number"].(int)
		if q.Get("direction") == "asc" {
			return a < b
		}
		return a > b
	})
	return list
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || strings.EqualFold(h, w)
		}
		if !found {
			return false
		}
	}
	return true
}

const botLogin = "github-actions[bot]"

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{comments: map[int64]comment{}, nextID: 100, issues: map[int]*issue{}, labels: map[string]bool{}, merged: map[string][]string{}}
	pullsPath := regexp.MustCompile(`^/repos/acme/deployments/commits/([0-9a-f]+)/pulls$`)
	commentsPath := regexp.MustCompile(`^/repos/acme/deployments/issues/(\d+)/comments$`)
	commentPath := regexp.MustCompile(`^/repos/acme/deployments/issues/comments/(\d+)$`)
	statusPath := regexp.MustCompile(`^/repos/acme/deployments/statuses/([0-9a-f]+)$`)
	issuePath := regexp.MustCompile(`^/repos/acme/deployments/issues/(\d+)$`)
	issueLabelsPath := regexp.MustCompile(`^/repos/acme/deployments/issues/(\d+)/labels$`)
	const issuesPath, labelsPath = "/repos/acme/deployments/issues", "/repos/acme/deployments/labels"
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		defer g.mu.Unlock()
		g.requests = append(g.requests, r.Method+" "+r.URL.Path)
		g.sent = append(g.sent, r.Method+" "+r.URL.RequestURI()+"\n"+string(body))
		g.auth = append(g.auth, r.Header.Get("Authorization"))
		switch {
		case r.URL.Path == "/user":
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"Resource not accessible by integration","status":"403"}`)
			return
		case r.URL.Path == "/graphql" && r.Method == http.MethodPost:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"data":{"viewer":{"login":"github-actions"}}}`)
			return
		case g.failN > 0:
			g.failN--
			w.WriteHeader(g.fail)
			fmt.Fprint(w, `{"message":"injected failure"}`)
			return
		}
		if g.forbidIssues && (strings.HasPrefix(r.URL.Path, issuesPath) || strings.HasPrefix(r.URL.Path, labelsPath)) {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"Resource not accessible by integration"}`)
			return
		}
		if g.forbid && r.Method != http.MethodGet {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"Resource not accessible by integration"}`)
			return
		}
		var in map[string]any
		_ = json.Unmarshal(body, &in)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && commentsPath.MatchString(r.URL.Path):
			n, _ := strconv.Atoi(commentsPath.FindStringSubmatch(r.URL.Path)[1])
			list := []map[string]any{}
			for id, c := range g.comments {
				if c.issue != n {
					continue
				}
				list = append(list, map[string]any{"id": id, "body": c.body, "user": map[string]any{"login": c.author},
					"html_url": fmt.Sprintf("https://github.com/acme/deployments/pull/%d#issuecomment-%d", n, id)})
			}
			sort.Slice(list, func(i, j int) bool { return list[i]["id"].(int64) < list[j]["id"].(int64) })
			_ = json.NewEncoder(w).Encode(list)
		case r.Method == http.MethodPost && commentsPath.MatchString(r.URL.Path):
			n, _ := strconv.Atoi(commentsPath.FindStringSubmatch(r.URL.Path)[1])
			g.nextID++
			g.comments[g.nextID] = comment{body: in["body"].(string), author: botLogin, issue: n}
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(map[string]any{"id": g.nextID, "body": in["body"], "html_url": fmt.Sprintf("https://github.com/acme/deployments/pull/%d#issuecomment-%d", n, g.nextID)})
		case r.Method == http.MethodPatch && commentPath.MatchString(r.URL.Path):
			var id int64
			fmt.Sscan(commentPath.FindStringSubmatch(r.URL.Path)[1], &id)
			c := g.comments[id]
			c.body = in["body"].(string)
			g.comments[id] = c
			_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "body": in["body"]})
		case r.Method == http.MethodGet && pullsPath.MatchString(r.URL.Path):
			list := []map[string]any{}
			if labels, ok := g.merged[pullsPath.FindStringSubmatch(r.URL.Path)[1]]; ok {
				var ls []map[string]any
				for _, l := range labels {
					ls = append(ls, map[string]any{"name": l})
				}
				list = append(list, map[string]any{"number": 7, "state": "closed", "merged_at": "2026-11-23T10:00:00Z", "labels": ls})
			}
			_ = json.NewEncoder(w).Encode(list)
		case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/deployments/pulls":
			list := []map[string]any{}
			for _, pr := range g.open {
				owner, _, _ := strings.Cut(pr.headRepo, "/")
				if h := r.URL.Query().Get("head"); h != "" && h != owner+":"+pr.branch {
					continue
				}
				list = append(list, map[string]any{"number": pr.number, "state": "open",
					"head": map[string]any{"ref": pr.branch, "sha": pr.sha, "repo": map[string]any{"full_name": pr.headRepo}}})
			}
			_ = json.NewEncoder(w).Encode(list)
		case r.Method == http.MethodDelete && commentPath.MatchString(r.URL.Path):
			var id int64
			fmt.Sscan(commentPath.FindStringSubmatch(r.URL.Path)[1], &id)
			delete(g.comments, id)
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodGet && r.URL.Path == issuesPath:
			_ = json.NewEncoder(w).Encode(g.listIssues(r.URL.Query()))
		case r.Method == http.MethodPost && r.URL.Path == issuesPath:
			title, _ := in["title"].(string)
			if title == "" {
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprint(w, `{"message":"Validation Failed","errors":[{"resource":"Issue","code":"missing_field","field":"title"}]}`)
				return
			}
			body, _ := in["body"].(string)
			is := &issue{number: g.nextIssue(), title: title, body: body, author: botLogin, state: "open"}
			for _, l := range asStrings(in["labels"]) {
				g.labels[l] = true // as GitHub, which creates a missing label for a token that may
				is.labels = append(is.labels, l)
			}
			g.issues[is.number] = is
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(is.json())
		case r.Method == http.MethodPatch && issuePath.MatchString(r.URL.Path):
			n, _ := strconv.Atoi(issuePath.FindStringSubmatch(r.URL.Path)[1])
			is := g.issues[n]
			if is == nil {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"message":"Not Found"}`)
				return
			}
			for field, to := range map[string]*string{"title": &is.title, "body": &is.body, "state": &is.state, "state_reason": &is.stateReason} {
				if v, ok := in[field].(string); ok {
					*to = v
				}
			}
			_ = json.NewEncoder(w).Encode(is.json())
		case r.Method == http.MethodPost && issueLabelsPath.MatchString(r.URL.Path):
			n, _ := strconv.Atoi(issueLabelsPath.FindStringSubmatch(r.URL.Path)[1])
			var add []string
			_ = json.Unmarshal(body, &add)
			if is := g.issues[n]; is != nil {
				is.labels = append(is.labels, add...)
			}
			_ = json.NewEncoder(w).Encode([]map[string]any{})
		case r.Method == http.MethodPost && r.URL.Path == labelsPath:
			name, _ := in["name"].(string)
			if g.labels[name] {
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprint(w, `{"message":"Validation Failed","errors":[{"resource":"Label","code":"already_exists","field":"name"}]}`)
				return
			}
			g.labels[name] = true
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(in)
		case r.Method == http.MethodPost && statusPath.MatchString(r.URL.Path):
			in["sha"] = statusPath.FindStringSubmatch(r.URL.Path)[1]
			g.statuses = append(g.statuses, in)
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(in)
		case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/deployments/dispatches":
			g.dispatches = append(g.dispatches, in)
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"message":"no route for %s %s"}`, r.Method, r.URL.Path)
		}
	}))
	// Cleanups run last first: the server stops before the calls are
	// checked, so none arrives after.
	t.Cleanup(func() {
		for _, msg := range g.unmet() {
			t.Error(msg)
		}
	})
	t.Cleanup(g.srv.Close)
	return g
}

func (g *fakeGitHub) count(method string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, r := range g.requests {
		if strings.HasPrefix(r, method+" ") {
			n++
		}
	}
	return n
}

// sentFrom is every request received after the first n, and how many
// there are in all.
func (g *fakeGitHub) sentFrom(n int) ([]string, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sent[min(n, len(g.sent)):]), len(g.sent)
}

func (g *fakeGitHub) commentBodies() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, c := range g.comments {
		out = append(out, c.body)
	}
	return out
}

// postComment adds a comment by author on pull request pr, as someone
// would.
func (g *fakeGitHub) postComment(pr int, author, body string) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nextID++
	g.comments[g.nextID] = comment{body: body, author: author, issue: pr}
	return g.nextID
}

// nextIssue numbers a new issue after the pull requests of the payloads.
func (g *fakeGitHub) nextIssue() int {
	n := 20
	for k := range g.issues {
		n = max(n, k+1)
	}
	return n
}

// openIssue adds an open issue by author, as someone would; its number.
func (g *fakeGitHub) openIssue(author, title, body string, labels ...string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	is := &issue{number: g.nextIssue(), title: title, body: body, author: author, state: "open", labels: labels}
	g.issues[is.number] = is
	return is.number
}

// issueList is every issue, oldest first, as copies.
func (g *fakeGitHub) issueList() []issue {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []issue
	for _, is := range g.issues {
		out = append(out, *is)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].number < out[j].number })
	return out
}

// issueComments are the bodies of the comments on issue n, oldest first.
func (g *fakeGitHub) issueComments(n int) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ids []int64
	for id, c := range g.comments {
		if c.issue == n {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var out []string
	for _, id := range ids {
		out = append(out, g.comments[id].body)
	}
	return out
}

// issueTexts are the titles and bodies of every issue, for leak checks
// (their comments are in commentBodies).
func (g *fakeGitHub) issueTexts() []string {
	var out []string
	for _, is := range g.issueList() {
		out = append(out, is.title, is.body)
	}
	return out
}

func asStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (g *fakeGitHub) commentBody(id int64) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.comments[id].body
}

func (g *fakeGitHub) lastStatus() map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.statuses) == 0 {
		return nil
	}
	return g.statuses[len(g.statuses)-1]
}

// runEnv is one action run's environment.
type runEnv struct {
	t       *testing.T
	vars    map[string]string
	gh      *fakeGitHub
	tempDir string
	ctx     context.Context
	// cloud reaches the key services and clouds the test runs
	// (kmstest.Client).
	cloud *http.Client
}

type runResult struct {
	code    int
	stdout  string
	outputs map[string]string
	summary string
	diff    string // the diff-file output's contents
	report  string // the report-file output's contents
}

// newRun prepares an action run for event (a file in the repository's testdata/events) in
// the git repository repo, with the SHAs of the payload replaced.
func newRun(t *testing.T, gh *fakeGitHub, event, repo string, shas map[string]string) *runEnv {
	t.Helper()
	payload, err := os.ReadFile(filepath.Join("..", "testdata", "events", event+".json"))
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range shas {
		payload = bytes.ReplaceAll(payload, []byte(from), []byte(to))
	}
	tmp := t.TempDir()
	eventPath := filepath.Join(tmp, "event.json")
	writeFile(t, eventPath, string(payload))
	name := strings.SplitN(event, ".", 2)[0]
	sha := shas["4444444444444444444444444444444444444444"]
	e := &runEnv{t: t, gh: gh, vars: map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": eventPath,
		"GITHUB_REPOSITORY": "acme/deployments", "GITHUB_REPOSITORY_OWNER": "acme", "GITHUB_SHA": sha,
		"GITHUB_WORKSPACE": repo, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "4242",
		"GITHUB_API_URL": gh.srv.URL,
		// As older runners pass it to container actions (the image, run
		// by other CI systems): a path on the runner's disk, absent in
		// the container.
		"RUNNER_TEMP":   "/home/runner/work/_temp",
		"GITHUB_OUTPUT": filepath.Join(tmp, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(tmp, "summary"),
		"INPUT_GITHUB-TOKEN": "ghs_testtoken0123456789", "INPUT_TIMEOUT": "60s",
	}, tempDir: t.TempDir(), ctx: context.Background()}
	return e
}

func (e *runEnv) input(name, value string) *runEnv {
	e.vars["INPUT_"+strings.ToUpper(name)] = value
	return e
}

func (e *runEnv) run() runResult {
	e.t.Helper()
	for _, f := range []string{"GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"} {
		if e.vars[f] != "" {
			writeFile(e.t, e.vars[f], "")
		}
	}
	var out bytes.Buffer
	code := Run(e.ctx, Env{Getenv: func(k string) string { return e.vars[k] }, Stdout: &out, TempDir: e.tempDir, CloudClient: e.cloud})
	summary, _ := os.ReadFile(e.vars["GITHUB_STEP_SUMMARY"])
	outputs := map[string]string{}
	if e.vars["GITHUB_OUTPUT"] != "" {
		outputs = parseOutputs(e.t, e.vars["GITHUB_OUTPUT"])
	}
	var diff []byte
	if f := outputs["diff-file"]; f != "" {
		var err error
		if diff, err = os.ReadFile(filepath.Join(e.vars["GITHUB_WORKSPACE"], f)); err != nil {
			e.t.Errorf("output diff-file: %v", err)
		}
	}
	var report []byte
	if f := outputs["report-file"]; f != "" {
		var err error
		if report, err = os.ReadFile(filepath.Join(e.vars["GITHUB_WORKSPACE"], f)); err != nil {
			e.t.Errorf("output report-file: %v", err)
		}
	}
	return runResult{code: code, stdout: out.String(), outputs: outputs, summary: string(summary), diff: string(diff), report: string(report)}
}

// parseOutputs reads the GITHUB_OUTPUT file (name<<DELIMITER ... DELIMITER).
func parseOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

// gitRepo is a throw-away repository holding units under deploy/.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	g := &gitRepo{t: t, dir: t.TempDir()}
	g.git("init", "-q", "-b", "main")
	g.git("config", "user.email", "test@example.com")
	g.git("config", "user.name", "test")
	return g
}

func (g *gitRepo) git(args ...string) string {
	g.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", g.dir}, args...)...).CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (g *gitRepo) write(path, content string) { writeFile(g.t, filepath.Join(g.dir, path), content) }

func (g *gitRepo) commit(msg string) string {
	g.git("add", "-A")
	g.git("commit", "-q", "-m", msg)
	return g.git("rev-parse", "HEAD")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withoutMaskCommands drops the ::add-mask:: lines, which carry the values
// to the runner by design and never reach the visible log.
func withoutMaskCommands(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "::add-mask::") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// lastStatusOf is the last commit status of one context, nil if none.
func (g *fakeGitHub) lastStatusOf(context string) map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := len(g.statuses) - 1; i >= 0; i-- {
		if g.statuses[i]["context"] == context {
			return g.statuses[i]
		}
	}
	return nil
}

// The fake's own discipline: expectations met or not, counted, and writes
// nobody declared.
func TestFakeGitHubChecksExpectations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		requests []string
		declare  func(g *fakeGitHub)
		want     []string
	}{
		{"made as expected", []string{"POST /repos/acme/deployments/statuses/abc", "POST /repos/acme/deployments/issues/7/comments"},
			func(g *fakeGitHub) { g.expect(statusCall, commentOn(7)) }, nil},
		{"never made", []string{"POST /repos/acme/deployments/statuses/abc"},
			func(g *fakeGitHub) { g.expect(statusCall, commentOn(7)) },
			[]string{"expected GitHub call POST /repos/acme/deployments/issues/7/comments was not made"}},
		{"made too often", []string{"POST /repos/acme/deployments/statuses/a", "POST /repos/acme/deployments/statuses/b", "POST /repos/acme/deployments/statuses/c"},
			func(g *fakeGitHub) { g.expectTimes(2, statusCall) },
			[]string{"GitHub call POST /repos/acme/deployments/statuses/* was made 3 time(s), expected 2 time(s)"}},
		{"made though it must not be", []string{"PATCH /repos/acme/deployments/issues/20"},
			func(g *fakeGitHub) { g.expectTimes(0, editIssue(20)) },
			[]string{"GitHub call PATCH /repos/acme/deployments/issues/20 was made 1 time(s), expected 0 time(s)"}},
		{"a segment pattern matches one segment only", []string{"PATCH /repos/acme/deployments/issues/comments/101"},
			func(g *fakeGitHub) { g.expect(editIssueCall) },
			[]string{"expected GitHub call PATCH /repos/acme/deployments/issues/* was not made"}},
		{"an undeclared write, when only expected ones may be", []string{"GET /user", "POST /graphql", "GET /repos/acme/deployments/issues", "POST /repos/acme/deployments/labels", "POST /repos/acme/deployments/statuses/abc"},
			func(g *fakeGitHub) { g.onlyExpectedWrites(); g.expect(statusCall) },
			[]string{"unexpected GitHub write POST /repos/acme/deployments/labels"}},
		{"undeclared writes are let be otherwise", []string{"POST /repos/acme/deployments/labels"},
			func(g *fakeGitHub) {}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := &fakeGitHub{requests: tc.requests}
			tc.declare(g)
			if diff := cmp.Diff(tc.want, g.unmet()); diff != "" {
				t.Errorf("unmet mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
