package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

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

// fakeGitHub is a GitHub REST API on 127.0.0.1 that keeps issue comments
// and commit statuses in memory and records every request. Like GitHub, it
// refuses GET /user to an installation token (the workflow's ghs_ token)
// and names its bot through GraphQL's viewer; comments it creates are by
// "github-actions[bot]".
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
	statuses []map[string]any // with "sha"
	forbid   bool             // answer every write with 403
	// fail answers the next failN requests (any but GET /user and
	// GraphQL) with this status.
	fail  int
	failN int
}

// comment is an issue comment and its author.
type comment struct{ body, author string }

const botLogin = "github-actions[bot]"

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{comments: map[int64]comment{}, nextID: 100}
	commentsPath := regexp.MustCompile(`^/repos/acme/deployments/issues/(\d+)/comments$`)
	commentPath := regexp.MustCompile(`^/repos/acme/deployments/issues/comments/(\d+)$`)
	statusPath := regexp.MustCompile(`^/repos/acme/deployments/statuses/([0-9a-f]+)$`)
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
			var list []map[string]any
			for id, c := range g.comments {
				list = append(list, map[string]any{"id": id, "body": c.body, "user": map[string]any{"login": c.author},
					"html_url": fmt.Sprintf("https://github.com/acme/deployments/pull/7#issuecomment-%d", id)})
			}
			sort.Slice(list, func(i, j int) bool { return list[i]["id"].(int64) < list[j]["id"].(int64) })
			_ = json.NewEncoder(w).Encode(list)
		case r.Method == http.MethodPost && commentsPath.MatchString(r.URL.Path):
			g.nextID++
			g.comments[g.nextID] = comment{body: in["body"].(string), author: botLogin}
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(map[string]any{"id": g.nextID, "body": in["body"], "html_url": fmt.Sprintf("https://github.com/acme/deployments/pull/7#issuecomment-%d", g.nextID)})
		case r.Method == http.MethodPatch && commentPath.MatchString(r.URL.Path):
			var id int64
			fmt.Sscan(commentPath.FindStringSubmatch(r.URL.Path)[1], &id)
			g.comments[id] = comment{body: in["body"].(string), author: g.comments[id].author}
			_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "body": in["body"]})
		case r.Method == http.MethodPost && statusPath.MatchString(r.URL.Path):
			in["sha"] = statusPath.FindStringSubmatch(r.URL.Path)[1]
			g.statuses = append(g.statuses, in)
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(in)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"message":"no route for %s %s"}`, r.Method, r.URL.Path)
		}
	}))
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

// postComment adds a comment by author, as someone on the PR would.
func (g *fakeGitHub) postComment(author, body string) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nextID++
	g.comments[g.nextID] = comment{body: body, author: author}
	return g.nextID
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
}

type runResult struct {
	code    int
	stdout  string
	outputs map[string]string
	summary string
	diff    string // the diff-file output's contents
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
		// As older runners pass it to container actions: a path on the
		// runner's disk, absent in the container.
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
	code := Run(e.ctx, Env{Getenv: func(k string) string { return e.vars[k] }, Stdout: &out, TempDir: e.tempDir})
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
	return runResult{code: code, stdout: out.String(), outputs: outputs, summary: string(summary), diff: string(diff)}
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
