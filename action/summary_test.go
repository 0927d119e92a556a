package action

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The runner drops a job summary over 1 MiB without a word. 300 objects
// with long diffs make several: the summary is trimmed below the limit and
// the full diff goes to the file the diff-file output names.
func TestLargeDiffFitsTheSummaryAndFillsTheDiffFile(t *testing.T) {
	g := newGitRepo(t)
	const objects = 300
	value := func(v string) string { return strings.Repeat(v+" ", 1500) } // ~3 KB a value
	write := func(v string) {
		for i := range objects {
			g.write(fmt.Sprintf("deploy/big/cm-%03d.yaml", i), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%03d\ndata:\n  a: %q\n  b: %q\n", i, value(v), value(v+"b")))
		}
	}
	write("before")
	base := g.commit("before")
	write("after")
	head := g.commit("after")

	gh := newFakeGitHub(t)
	gh.expect(statusCall, commentOn(8))
	res := newRun(t, gh, "pull_request.fork", g.dir, map[string]string{forkHead: head, prBase: base}).input("path", "deploy/big").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if n := len(res.summary); n >= 1<<20 || n < 500<<10 {
		t.Errorf("summary of %d bytes, want just under 1 MiB", n)
	}
	file := res.outputs["diff-file"]
	if file != "kustomize-deploy-diffs/deploy-big.diff" {
		t.Fatalf("diff-file output %q", file)
	}
	if !strings.Contains(res.summary, "`"+file+"`") {
		t.Error("the summary does not name the diff file")
	}
	if n := strings.Count(res.diff, "+++ "); n != objects {
		t.Errorf("the diff file has %d diffs, want %d", n, objects)
	}
	if len(res.diff) < 2<<20 {
		t.Errorf("the diff file has %d bytes, want every diff in full", len(res.diff))
	}
	if _, err := os.Stat(filepath.Join(g.dir, file)); err != nil {
		t.Errorf("the diff file is not where the output says, relative to the workspace: %v", err)
	}
}

func TestNoDiffNoDiffFile(t *testing.T) {
	g := newGitRepo(t)
	g.write("deploy/web/deployment.yaml", deploymentYAML("1"))
	base := g.commit("web")
	g.write("README.md", "docs only\n")
	head := g.commit("docs")
	gh := newFakeGitHub(t)
	gh.expect(statusCall, commentOn(8))
	res := newRun(t, gh, "pull_request.fork", g.dir, map[string]string{forkHead: head, prBase: base}).input("path", "deploy/web").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if f, ok := res.outputs["diff-file"]; !ok || f != "" {
		t.Errorf("diff-file output %q (set: %v), want set and empty", f, ok)
	}
}
