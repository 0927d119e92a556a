package action

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/github"
)

// bigUnit writes n ConfigMaps (values of size bytes, from seed) into
// deploy/big, leaving out the names in skip.
func bigUnit(repo *gitRepo, n, size int, seed string, skip map[int]bool) {
	var b strings.Builder
	for i := range n {
		if skip[i] {
			continue
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-%03d\n  namespace: big\ndata:\n  value: %s\n", i, strings.Repeat(seed, size/len(seed)))
	}
	repo.write("deploy/big/all.yaml", b.String())
}

// A PR diff too large for one comment (40 ConfigMaps of 6 KB values:
// few enough changes that each keeps its diff in the comment) becomes
// numbered comments, each under GitHub's limit, the risky changes (the
// prunes) on the first; when the next push shrinks it, the surplus pages
// are deleted.
func TestLargeDiffIsPagedIntoComments(t *testing.T) {
	repo := newGitRepo(t)
	bigUnit(repo, 40, 6000, "a", nil)
	base := repo.commit("base")
	bigUnit(repo, 40, 6000, "b", map[int]bool{7: true, 8: true, 9: true})
	repo.write("deploy/big/namespace.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: big\n")
	head := repo.commit("head")
	gh := newFakeGitHub(t)
	gh.onlyExpectedWrites()
	gh.expect(statusCall)
	shas := map[string]string{"3333333333333333333333333333333333333333": head, prBase: base}

	res := newRun(t, gh, "pull_request.fork", repo.dir, shas).input("path", "deploy/big").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	m := marker("unit=deploy-big", "")
	pages := pagesOf(gh, m)
	// Each page created once; after the next push, page 1 is edited and
	// the others deleted.
	gh.expectTimes(len(pages), commentOn(8))
	gh.expectTimes(1, editCommentCall)
	gh.expectTimes(len(pages)-1, deleteCommentCall)
	if len(pages) < 3 || len(pages) > commentPages {
		t.Fatalf("%d comments for a ~250 KB diff, want between 3 and %d", len(pages), commentPages)
	}
	for n, body := range pages {
		if len([]rune(body)) > 65536 {
			t.Errorf("page %d is %d characters, over GitHub's limit", n+1, len([]rune(body)))
		}
		if n < len(pages)-1 && !strings.Contains(body, fmt.Sprintf("Continued in the next comment (%d/%d)", n+2, len(pages))) {
			t.Errorf("page %d does not say it continues", n+1)
		}
	}
	first := pages[0]
	for _, risky := range []string{"**⚠️ 3 risky changes** (3 prune)", "3 × `ConfigMap` deleted in `big` — `big-007`, `big-008`, `big-009`"} {
		if !strings.Contains(first, risky) {
			t.Errorf("page 1 lacks the risky %q", risky)
		}
	}
	all := strings.Join(pages, "\n")
	for _, name := range []string{"big-000", "big-020", "big-039"} {
		if !strings.Contains(all, "ConfigMap/big/"+name) {
			t.Errorf("no page mentions %s", name)
		}
	}
	if !strings.Contains(res.stdout, fmt.Sprintf("created PR comment (%d/%d)", len(pages), len(pages))) {
		t.Errorf("the log does not name the pages:\n%s", res.stdout)
	}

	// The next push changes one ConfigMap: one comment, the rest deleted.
	bigUnit(repo, 40, 6000, "a", nil)
	repo.write("deploy/big/all.yaml", strings.Replace(readFile(t, repo.dir+"/deploy/big/all.yaml"), "name: big-032", "name: big-032\n  labels: {changed: \"yes\"}", 1))
	repo.git("rm", "-q", "deploy/big/namespace.yaml")
	shas["3333333333333333333333333333333333333333"] = repo.commit("small")
	res = newRun(t, gh, "pull_request.fork", repo.dir, shas).input("path", "deploy/big").run()
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	if pages := pagesOf(gh, m); len(pages) != 1 || !strings.Contains(pages[0], "big-032") || strings.Contains(pages[0], "Continued") {
		t.Errorf("after the diff shrank: %d comments\n%s", len(pages), strings.Join(pages, "\n---\n"))
	}
}

// pagesOf are the comments of marker's report, in page order.
func pagesOf(gh *fakeGitHub, m string) []string {
	var pages []string
	for n := 1; ; n++ {
		pm := github.PageMarker(m, n)
		found := ""
		for _, b := range gh.commentBodies() {
			if strings.HasPrefix(b, pm+"\n") {
				found = b
			}
		}
		if found == "" {
			return pages
		}
		pages = append(pages, found)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
