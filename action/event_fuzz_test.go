package action

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
)

// FuzzReadEvent reads any webhook payload under any event name. Malformed
// JSON is an error, never a panic; what is read is safe to use: a pull
// request number is a positive number the payload gave or none, and a
// commit from the payload (handed to git as an argument by the offline
// diff) is a commit ID or nothing.
func FuzzReadEvent(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "events", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no event payloads in testdata/events: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(strings.SplitN(filepath.Base(file), ".", 2)[0], data)
	}
	f.Add("pull_request", []byte(`{"pull_request":{"number":1e300,"head":{"sha":"--upload-pack=touch /tmp/x","repo":null},"base":{"sha":7}}}`))
	f.Add("merge_group", []byte(`{"merge_group":{"head_sha":"HEAD~1","base_sha":""},"pull_request":"x"}`))
	f.Add("push", []byte(`[]`))
	f.Add("push", []byte(`null`))

	const pushed = "4444444444444444444444444444444444444444"
	f.Fuzz(func(t *testing.T, name string, payload []byte) {
		path := filepath.Join(t.TempDir(), "event.json")
		if err := os.WriteFile(path, payload, 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{
			"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": path, "GITHUB_SHA": pushed,
			"GITHUB_REPOSITORY": "acme/deployments", "GITHUB_RUN_ID": "4242",
		}
		gha := githubactions.New(githubactions.WithGetenv(func(k string) string { return env[k] }))
		ev, err := readEvent(gha)

		var event map[string]any
		if json.Unmarshal(payload, &event) != nil {
			if err == nil {
				t.Fatalf("a payload that is not a JSON object was read: %+v", ev)
			}
			return
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "event payload: ") {
				t.Fatalf("a JSON object was refused without naming the payload: %v", err)
			}
			return
		}
		if ev.Owner != "acme" || ev.Repo != "deployments" {
			t.Errorf("repository %s/%s, want acme/deployments", ev.Owner, ev.Repo)
		}

		pr, _ := event["pull_request"].(map[string]any)
		n, isNumber := pr["number"].(float64)
		switch {
		case ev.PR < 0, ev.PR > 0 && (!isNumber || float64(ev.PR) != n):
			t.Errorf("PR %d from the payload's number %v", ev.PR, pr["number"])
		case ev.PR == 0 && isNumber && n >= 1 && n < 1<<31 && n == float64(int(n)):
			t.Errorf("no PR from the payload's number %v", n)
		}
		for what, sha := range map[string]string{"commit": ev.SHA, "base commit": ev.BaseSHA} {
			if sha != "" && sha != pushed && !commitIDPattern.MatchString(sha) {
				t.Errorf("%s %q from the payload is not a commit ID", what, sha)
			}
		}
		_, group := event["merge_group"].(map[string]any)
		if pr != nil && !group && ev.SHA == pushed && str(pr, "head", "sha") != pushed {
			t.Errorf("a pull request run reports on GITHUB_SHA (the merge commit), not on the PR's head %v", str(pr, "head", "sha"))
		}
	})
}

var commitIDPattern = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
