package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// diff --base on a laptop gives what a pull request's comment gives: the
// change against the base apart from what was changed in the cluster.
func TestDiffAgainstABaseIsThreeWay(t *testing.T) {
	c := newCLI(t)
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	settings := func(greeting, size string) {
		writeFile(t, filepath.Join(repo, "app", "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {greeting: "+greeting+", size: "+size+"}\n")
	}
	git("init", "-q", "-b", "main")
	settings("hello", "small")
	git("add", "-A")
	git("commit", "-q", "-m", "small")
	base := git("rev-parse", "HEAD")
	args := []string{"--name", "web", "--path", filepath.Join(repo, "app"), "--target-namespace", c.ns}
	if o, r := c.apply(args...); o.code != exitOK {
		t.Fatalf("apply: %s %s", r.Reason, r.Message)
	}
	cms := cluster.Client(t).CoreV1().ConfigMaps(c.ns)
	cm, err := cms.Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = "edited by hand"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	settings("hello", "large") // in the working tree, not committed

	o := c.run(append([]string{"diff", "--base", "main"}, args...)...)
	if o.code != exitOK {
		t.Fatalf("diff --base: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "diff --base", o.stdout,
		"changes against "+base[:12],
		"-  size: small\n+  size: large",
		"reverts  ConfigMap/"+c.ns+"/settings data.greeting: live edited by hand, Git hello")

	o = c.run(append([]string{"diff", "--base", base, "-o", "json"}, args...)...)
	var r result.Result
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("diff --base -o json: %v\n%s", err, o.stderr)
	}
	if r.Base != base || r.AppliedRevision != base || len(r.Entries) != 1 {
		t.Fatalf("result: base %q applied %q entries %+v", r.Base, r.AppliedRevision, r.Entries)
	}
	want := []result.FieldDrift{{Field: "data.greeting", Live: "edited by hand", Applied: "hello", Merged: "hello", Reverted: true}}
	if e := r.Entries[0]; !slices.Equal(e.Drift, want) || strings.Contains(e.Change, "edited by hand") {
		t.Errorf("drift %+v, want %+v; change:\n%s", e.Drift, want, e.Change)
	}

	if o := c.run(append([]string{"diff", "--base", "no-such-branch"}, args...)...); o.code != exitUsage || !strings.Contains(o.stderr, "--base no-such-branch is not a commit") {
		t.Errorf("a base that is no commit: exit %d\n%s", o.code, o.stderr)
	}
}

// A change that flips a Kustomization's spec.suspend says so: merging it
// stops (or restarts) a unit's deploys.
func TestDiffAgainstABaseShowsSuspendFlips(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, c.ns)
	apps := filepath.Join(repo, "clusters/local/apps.yaml")
	data, err := os.ReadFile(apps)
	if err != nil {
		t.Fatal(err)
	}
	suspended := strings.Replace(string(data), "  path: ./monitoring\n", "  path: ./monitoring\n  suspend: true\n", 1)
	if suspended == string(data) {
		t.Fatal("the fixture has no monitoring unit to suspend")
	}
	writeFile(t, apps, suspended)
	cfg := filepath.Join(repo, "clusters/local")
	o := c.run("diff", "--config", cfg, "--base", "HEAD")
	contains(t, "diff --config --base", o.stdout, "warning: this change suspends unit monitoring")
	_, s := c.runConfig("diff", "--config", cfg, "--base", "HEAD")
	for _, r := range s.Units {
		want := result.Suspension("")
		if r.Unit == "monitoring" {
			want = result.Suspends
		}
		if r.Suspension != want {
			t.Errorf("%s: suspension %q, want %q", r.Unit, r.Suspension, want)
		}
	}
}

// A pull request whose dry-run fails still shows what a review flags
// offline, beside the failure: the image it changes and the Namespace it
// deletes.
func TestDiffAgainstABaseReviewsAFailedDryRun(t *testing.T) {
	c := newCLI(t)
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	web := func(image string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: '" + image + "'}]}\n"
	}
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(repo, "app", "web.yaml"), web("registry.example/web:1"))
	writeFile(t, filepath.Join(repo, "app", "ns.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+c.ns+"-old}\n")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	writeFile(t, filepath.Join(repo, "app", "web.yaml"), web("registry.example/web:2"))
	if err := os.Remove(filepath.Join(repo, "app", "ns.yaml")); err != nil {
		t.Fatal(err)
	}
	// A name the API server refuses: the dry-run fails.
	writeFile(t, filepath.Join(repo, "app", "bad.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\ndata: {a: b}\n")

	o := c.run("diff", "--base", "main", "--name", "web", "--path", filepath.Join(repo, "app"), "-n", c.ns, "-o", "json")
	if o.code == exitOK {
		t.Fatalf("diff passed\n%s\n%s", o.stdout, o.stderr)
	}
	var r result.Result
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, o.stderr)
	}
	if !r.Failed() || !strings.Contains(r.Message, "Bad_Name") {
		t.Errorf("reason %s: %s", r.Reason, r.Message)
	}
	if len(r.Images) != 1 || r.Images[0].From != "registry.example/web:1" || r.Images[0].To != "registry.example/web:2" {
		t.Errorf("images %+v", r.Images)
	}
	var deleted *result.Entry
	for i, e := range r.Entries {
		if e.Object.Kind == "Namespace" && e.Object.Name == c.ns+"-old" {
			deleted = &r.Entries[i]
		}
	}
	if deleted == nil || deleted.Action != result.Deleted || len(deleted.Dangers) == 0 {
		t.Errorf("the deleted Namespace: %+v\nentries %+v", deleted, r.Entries)
	}
}
