package docs

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// documents are the markdown files whose links must hold: the ones at the
// repository's root that readers start from, and everything in docs/
// (the generated CLI reference included).
func documents(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CHANGELOG.md", "SECURITY.md", "CONTRIBUTING.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".md" {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Every relative link and image of the documentation leads to a file of
// the repository and, with a #fragment, to a heading of it.
func TestDocumentationLinksResolve(t *testing.T) {
	files := documents(t)
	if len(files) < 10 {
		t.Fatalf("found only %v", files)
	}
	problems, err := CheckLinks(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// The README is read in five minutes; reference belongs in docs/.
func TestREADMEStaysShort(t *testing.T) {
	if n := bytes.Count(readRepoFile(t, "README.md"), []byte("\n")); n >= 260 {
		t.Errorf("README.md has %d lines, want under 260: move reference into docs/", n)
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Runs of one unit never overlap", "runs-of-one-unit-never-overlap"},
		{"`pull_request_target`", "pull_request_target"},
		{"How it runs: a prebuilt image", "how-it-runs-a-prebuilt-image"},
		{"Other clusters: GKE, AKS, exec plugins", "other-clusters-gke-aks-exec-plugins"},
		{"Suspend, pin and the order of revisions", "suspend-pin-and-the-order-of-revisions"},
		{"kustomize-deploy apply", "kustomize-deploy-apply"},
		{"SEE ALSO", "see-also"},
		{"What's new? (v1.2)", "whats-new-v12"},
		{"A [linked](other.md#x) word", "a-linked-word"},
		{"**Bold** and *emphasis*", "bold-and-emphasis"},
		{"Two  spaces", "two--spaces"},
		{"Rocket 🚀 launch", "rocket--launch"},
		{"Straße und Übung", "straße-und-übung"},
		{"<code>x</code> y", "x-y"},
		{"  padded  ", "padded"},
	} {
		if got := Slug(tc.heading); got != tc.want {
			t.Errorf("Slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func TestAnchorsNumberRepeatedHeadings(t *testing.T) {
	doc := "# Examples\n\n## Examples\n\n```sh\n# not a heading\n```\n\n### Examples ###\n\n#hashtag\n\n## Examples 1\n\n<a id=\"custom\"></a>\n"
	want := []string{"examples", "examples-1", "examples-2", "examples-1-1", "custom"}
	if got := Anchors(doc); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLinksSkipCode(t *testing.T) {
	doc := "see [a](a.md) and ![b](img/b.png \"title\")\n" +
		"`[not](code.md)` and ``[nor `this`](x.md)``\n" +
		"```md\n[fenced](f.md)\n```\n" +
		"a span `over\n[two](lines.md)` lines, [c](<c d.md>)\n" +
		"[ref]: refs.md\n" +
		"<img src=\"docs/x.png\"> [nested [brackets]](n.md#frag) [p](p_(1).md)\n"
	want := []Link{{1, "a.md"}, {1, "img/b.png"}, {7, "c d.md"}, {8, "refs.md"}, {9, "docs/x.png"}, {9, "n.md#frag"}, {9, "p_(1).md"}}
	if got := Links(doc); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// A broken link is reported with its file and line, and good ones are not.
func TestCheckLinksReportsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/guide.md", "# Guide\n\n## Step one\n\n## Step one\n")
	write("examples/app.yml", "a: b\n")
	write("README.md", strings.Join([]string{
		"# Project",                                 // 1
		"[guide](docs/guide.md) [dir](examples)",    // 2: fine
		"[step](docs/guide.md#step-one-1)",          // 3: fine, the second "Step one"
		"[here](#project) [web](https://x.test/#a)", // 4: fine
		"[line](examples/app.yml#L1)",               // 5: fine
		"[gone](docs/missing.md)",                   // 6
		"[nohead](docs/guide.md#step-two)",          // 7
		"[self](#nowhere) ![img](docs/shot.png)",    // 8
		"[up](../outside.md) [abs](/docs/guide.md)", // 9
		"[yml](examples/app.yml#top)",               // 10
	}, "\n")+"\n")
	problems, err := CheckLinks(dir, []string{"README.md", "docs/guide.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		"README.md:6: docs/missing.md: no such file or directory",
		"README.md:7: docs/guide.md#step-two: no heading with the anchor #step-two in guide.md",
		"README.md:8: #nowhere: no heading with the anchor #nowhere in README.md",
		"README.md:8: docs/shot.png: no such file or directory",
		"README.md:9: ../outside.md: outside the repository",
		"README.md:9: /docs/guide.md: a path from the site's root leaves the repository on GitHub; link relative to this file",
		"README.md:10: examples/app.yml#top: a #fragment of something that is not a markdown file",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
