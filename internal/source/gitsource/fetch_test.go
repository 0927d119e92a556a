package gitsource_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gitsource"
)

// fleet is a repository with history on two branches, tags (annotated,
// lightweight, semver and not) and a pull request's ref.
type fleet struct {
	url                           string
	first, second, third, feature string
	pull                          string
	server                        *gittest.Server
}

func newFleet(t *testing.T) fleet {
	srv := gittest.NewServer(t)
	r := srv.Repo("fleet")
	f := fleet{url: r.URL, server: srv}
	f.first = r.Commit("one", map[string]string{"app/version.txt": "1.0.0", "README.md": "fleet"})
	r.Tag("v1.0.0", true)
	f.second = r.Commit("two", map[string]string{"app/version.txt": "1.1.0"})
	r.Tag("v1.1.0", false)
	r.Tag("not-a-version", false)
	f.third = r.Commit("three", map[string]string{"app/version.txt": "2.0.0"})
	r.Tag("v2.0.0", true)
	r.Branch("feature")
	f.feature = r.Commit("feature", map[string]string{"app/version.txt": "feature"})
	r.Branch("pr")
	f.pull = r.Commit("pull", map[string]string{"app/version.txt": "pull"})
	r.Ref("refs/pull/7/head")
	r.Checkout("master")
	return f
}

func TestFetchRefs(t *testing.T) {
	f := newFleet(t)
	for _, tc := range []struct {
		name         string
		ref          gitsource.Ref
		version, rev string
	}{
		{"default branch master", gitsource.Ref{}, "2.0.0", "master@sha1:" + f.third},
		{"branch", gitsource.Ref{Branch: "feature"}, "feature", "feature@sha1:" + f.feature},
		{"annotated tag", gitsource.Ref{Tag: "v1.0.0"}, "1.0.0", "v1.0.0@sha1:" + f.first},
		{"lightweight tag", gitsource.Ref{Tag: "v1.1.0", Branch: "feature"}, "1.1.0", "v1.1.0@sha1:" + f.second},
		{"semver", gitsource.Ref{SemVer: "<2.0.0", Tag: "v1.0.0"}, "1.1.0", "v1.1.0@sha1:" + f.second},
		{"semver highest", gitsource.Ref{SemVer: ">=1.0.0"}, "2.0.0", "v2.0.0@sha1:" + f.third},
		{"name", gitsource.Ref{Name: "refs/pull/7/head"}, "pull", "7/head@sha1:" + f.pull},
		{"name of a branch", gitsource.Ref{Name: "refs/heads/feature"}, "feature", "feature@sha1:" + f.feature},
		{"commit", gitsource.Ref{Commit: f.first, Tag: "v2.0.0"}, "1.0.0", "sha1:" + f.first},
		{"commit on a branch", gitsource.Ref{Commit: f.second, Branch: "feature"}, "1.1.0", "feature@sha1:" + f.second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tree")
			c, err := gitsource.Fetch(context.Background(), gitsource.Options{URL: f.url, Ref: tc.ref, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if c.Revision != tc.rev {
				t.Errorf("revision %q, want %q", c.Revision, tc.rev)
			}
			if c.Time.IsZero() {
				t.Error("no commit time")
			}
			got, err := os.ReadFile(filepath.Join(dir, "app", "version.txt"))
			if err != nil || string(got) != tc.version {
				t.Errorf("app/version.txt = %q, %v; want %q", got, err, tc.version)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git")); !os.IsNotExist(err) {
				t.Errorf("the tree holds .git (%v): Git's files are kept out of it", err)
			}
		})
	}
}

func TestFetchMissing(t *testing.T) {
	f := newFleet(t)
	for _, tc := range []struct {
		name string
		ref  gitsource.Ref
		url  string
		want string
	}{
		{"branch", gitsource.Ref{Branch: "nope"}, "", "branch nope is not in the repository"},
		{"tag", gitsource.Ref{Tag: "v9"}, "", "tag v9 is not in the repository"},
		{"semver", gitsource.Ref{SemVer: ">=5.0.0"}, "", `no tag matches semver range ">=5.0.0"`},
		{"name", gitsource.Ref{Name: "refs/pull/8/head"}, "", "reference refs/pull/8/head is not in the repository"},
		{"commit not on branch", gitsource.Ref{Commit: f.feature, Branch: "master"}, "", "is not on branch master"},
		{"commit nowhere", gitsource.Ref{Commit: strings.Repeat("ab", 20)}, "", "is not on any branch"},
		{"repository", gitsource.Ref{}, f.server.URL + "/nothing", "repository not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := f.url
			if tc.url != "" {
				url = tc.url
			}
			_, err := gitsource.Fetch(context.Background(), gitsource.Options{URL: url, Ref: tc.ref, Dir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestFetchBasicAuth(t *testing.T) {
	srv := gittest.NewServer(t)
	r := srv.Repo("private")
	r.Commit("one", map[string]string{"a.yaml": "a: 1\n"})
	srv.RequireAuth("private", "git", "right-token-1234")

	for _, tc := range []struct {
		name string
		auth *gitsource.Auth
		want string
	}{
		{"none", nil, "no credentials were given"},
		{"wrong token", &gitsource.Auth{Username: "git", Password: "wrong-token-5678"}, "the credentials given for spec.secretRef were refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gitsource.Fetch(context.Background(), gitsource.Options{URL: r.URL, Auth: tc.auth, Dir: t.TempDir()})
			var ae *gitsource.AuthError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want an AuthError saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "token-") {
				t.Fatalf("the error quotes a token: %v", err)
			}
		})
	}
	dir := t.TempDir()
	c, err := gitsource.Fetch(context.Background(), gitsource.Options{URL: r.URL, Auth: &gitsource.Auth{Username: "git", Password: "right-token-1234"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Revision, "master@sha1:") {
		t.Errorf("revision %q", c.Revision)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.yaml")); err != nil {
		t.Error(err)
	}
}

// A token in spec.url itself is never quoted back.
func TestFetchURLTokenRedacted(t *testing.T) {
	srv := gittest.NewServer(t)
	srv.Repo("private").Commit("one", map[string]string{"a.yaml": "a: 1\n"})
	srv.RequireAuth("private", "git", "right-token-1234")
	url := strings.Replace(srv.URL, "http://", "http://git:url-token-9999@", 1) + "/private"
	_, err := gitsource.Fetch(context.Background(), gitsource.Options{URL: url, Dir: t.TempDir()})
	if err == nil {
		t.Fatal("fetched with a wrong token")
	}
	if strings.Contains(err.Error(), "url-token-9999") {
		t.Fatalf("the error quotes the URL's token: %v", err)
	}
}

func TestFetchExcludes(t *testing.T) {
	srv := gittest.NewServer(t)
	r := srv.Repo("r")
	r.Commit("one", map[string]string{
		"deploy/app.yaml": "a: 1\n", "deploy/logo.png": "png", ".github/workflows/ci.yaml": "on: push\n",
		".gitignore": "x\n", "docs/readme.yaml": "d: 1\n",
	})
	dir := t.TempDir()
	if _, err := gitsource.Fetch(context.Background(), gitsource.Options{URL: r.URL, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	assertFiles(t, dir, []string{"deploy/app.yaml", "docs/readme.yaml"})

	// spec.ignore replaces the default exclusions (but Git's own files).
	ignore := "/*\n!/deploy\n"
	dir = t.TempDir()
	if _, err := gitsource.Fetch(context.Background(), gitsource.Options{URL: r.URL, Dir: dir, Ignore: &ignore}); err != nil {
		t.Fatal(err)
	}
	assertFiles(t, dir, []string{"deploy/app.yaml", "deploy/logo.png"})

	// A .sourceignore file, for its own directory.
	r.Commit("two", map[string]string{"docs/.sourceignore": "*.yaml\n"})
	dir = t.TempDir()
	if _, err := gitsource.Fetch(context.Background(), gitsource.Options{URL: r.URL, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	assertFiles(t, dir, []string{".github/workflows/ci.yaml", "deploy/app.yaml", "deploy/logo.png", "docs/.sourceignore"})
}

func assertFiles(t *testing.T, dir string, want []string) {
	t.Helper()
	var got []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("files %v, want %v", got, want)
	}
}
