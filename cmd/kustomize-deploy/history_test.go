package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// commitAt commits everything in dir (a git repository, made if need be)
// as committed at date, and returns the commit.
func commitAt(t *testing.T, dir, date, msg string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		gitOut(t, dir, "init", "-q")
	}
	gitOut(t, dir, "add", "-A")
	cmd := exec.Command("git", "-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", msg)
	cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE="+date, "GIT_AUTHOR_DATE="+date)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	return strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
}

// Three applies make three revisions of the unit's history, with who ran
// them; rollback --to 1 applies the first commit again once allowed, says
// so, and is a fourth revision; no revision record, nor anything printed,
// holds the value of the unit's SOPS Secret.
func TestHistoryAndRollback(t *testing.T) {
	l := newLeakCLI(t)
	l.scan.Secret("SOPS stringData", leakSpecial)
	l.env["GITHUB_ACTOR"] = "octocat"
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [creds.enc.yaml, settings.yaml]\n")
	l.encryptYAML(filepath.Join(dir, "creds.enc.yaml"), secretObject("creds", "", map[string]any{"special": leakSpecial}, nil))
	var commits []string
	for i, greeting := range []string{"one", "two", "three"} {
		writeFile(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  greeting: "+greeting+"\n")
		commits = append(commits, commitAt(t, dir, fmt.Sprintf("2026-11-2%dT10:00:00Z", i+1), greeting))
		if o := l.run("apply "+greeting, "apply", "--name", "app", "--path", dir, "--target-namespace", l.ns); o.code != exitOK {
			t.Fatalf("apply %s: exit %d\n%s\n%s", greeting, o.code, o.stdout, o.stderr)
		}
	}

	text, js := l.both("history", "history", "--name", "app")
	var history []inventory.Revision
	if err := json.Unmarshal([]byte(js.stdout), &history); err != nil {
		t.Fatalf("history -o json: %v\n%s", err, js.stdout)
	}
	if len(history) != 3 {
		t.Fatalf("history = %+v, want three revisions", history)
	}
	for i, r := range history {
		if r.Revision != i+1 || r.SourceRevision != commits[i] || !r.Ready || r.Reason != result.ReasonApplySucceed || r.By != "octocat" || r.Digest == "" {
			t.Errorf("revision %d = %+v", i+1, r)
		}
	}
	if history[0].Counts.Created != 2 || history[1].Counts.Configured != 1 {
		t.Errorf("counts: %+v then %+v; want 2 created, then 1 configured", history[0].Counts, history[1].Counts)
	}
	contains(t, "history", text.stdout, "REVISION", commits[0][:12], "octocat", "applied now")

	rollback := []string{"rollback", "--name", "app", "--path", dir, "--target-namespace", l.ns, "--to", "1"}
	if o := l.run("rollback (refused)", rollback...); o.code != exitFail || !strings.Contains(o.stderr, "--allow-rollback") {
		t.Fatalf("rollback without --allow-rollback: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	o := l.run("rollback -o json", append(rollback, "--allow-rollback", "-o", "json")...)
	var res result.Result
	if err := json.Unmarshal([]byte(o.stdout), &res); err != nil || o.code != exitOK {
		t.Fatalf("rollback: exit %d, %v\n%s\n%s", o.code, err, o.stdout, o.stderr)
	}
	if res.RollbackOf != 1 || res.Revision != commits[0] || res.HistoryRevision != 4 || !strings.Contains(res.Message, "a rollback to revision 1") {
		t.Errorf("rollback result: rollbackOf %d, revision %s, history revision %d, message %q", res.RollbackOf, res.Revision, res.HistoryRevision, res.Message)
	}
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(l.ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "one" {
		t.Fatalf("after the rollback the ConfigMap says %v (%v), want the first revision's", cm.Data, err)
	}
	_, js = l.both("history (after)", "history", "--name", "app")
	if err := json.Unmarshal([]byte(js.stdout), &history); err != nil || len(history) != 4 || history[3].RollbackOf != 1 || history[3].SourceRevision != commits[0] {
		t.Errorf("history after the rollback: %+v (%v)", history, err)
	}
	// The inventory Secret itself: its status holds the history.
	secret, err := cluster.Client(t).CoreV1().Secrets(l.ns).Get(t.Context(), inventory.SecretName("app"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for key, value := range secret.Data {
		l.scan.Capture("inventory Secret", key, string(value))
	}
}
