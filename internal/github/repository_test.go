package github

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Open pull requests are listed page by page, with what a
// ResourceSetInputProvider exports of each.
func TestOpenPulls(t *testing.T) {
	r := newRegistry(t)
	const pulls = "/repos/acme/app/pulls"
	r.register("GET", pulls, "state=open&per_page=100", http.StatusOK,
		`[{"number":7,"title":"Add a","user":{"login":"ann"},"head":{"ref":"feat/a","sha":"aaa"},"labels":[{"name":"deploy/preview"}]}]`,
		"Link", `<{{server}}`+pulls+`?page=2&per_page=100&state=open>; rel="next"`)
	r.register("GET", pulls, "state=open&page=2", http.StatusOK,
		`[{"number":9,"title":"Fix","user":{"login":"bob"},"head":{"ref":"fix","sha":"ccc"},"labels":[]}]`)
	c, err := New("t0ken", r.URL())
	if err != nil {
		t.Fatal(err)
	}
	var got []Pull
	if err := c.OpenPulls(t.Context(), "acme", "app", func(p Pull) bool { got = append(got, p); return true }); err != nil {
		t.Fatal(err)
	}
	want := []Pull{
		{Number: 7, Title: "Add a", Author: "ann", HeadRef: "feat/a", HeadSHA: "aaa", Labels: []string{"deploy/preview"}},
		{Number: 9, Title: "Fix", Author: "bob", HeadRef: "fix", HeadSHA: "ccc", Labels: []string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if auth := r.Calls()[0].Header.Get("Authorization"); auth != "Bearer t0ken" {
		t.Errorf("Authorization = %q", auth)
	}
}

// A visitor that has enough stops the listing: no further page is read.
func TestBranchesStopEarly(t *testing.T) {
	r := newRegistry(t)
	const branches = "/repos/acme/app/branches"
	r.register("GET", branches, "per_page=100", http.StatusOK,
		`[{"name":"main","commit":{"sha":"1"}},{"name":"dev","commit":{"sha":"2"}}]`,
		"Link", `<{{server}}`+branches+`?page=2&per_page=100>; rel="next"`)
	c, err := New("t", r.URL())
	if err != nil {
		t.Fatal(err)
	}
	var got []Ref
	if err := c.Branches(t.Context(), "acme", "app", func(b Ref) bool { got = append(got, b); return len(got) < 1 }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Ref{{Name: "main", SHA: "1"}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTags(t *testing.T) {
	r := newRegistry(t)
	r.register("GET", "/repos/acme/app/tags", "per_page=100", http.StatusOK, `[{"name":"v1.0.0","commit":{"sha":"a"}}]`)
	c, err := New("t", r.URL())
	if err != nil {
		t.Fatal(err)
	}
	var got []Ref
	if err := c.Tags(t.Context(), "acme", "app", func(b Ref) bool { got = append(got, b); return true }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Ref{{Name: "v1.0.0", SHA: "a"}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A server that names a page it already gave as the next one ends the
// listing with an error, not a loop.
func TestTagsRepeatedPage(t *testing.T) {
	r := newRegistry(t)
	const tags = "/repos/acme/app/tags"
	for _, query := range []string{"per_page=100", "page=2"} {
		r.register("GET", tags, query, http.StatusOK, `[{"name":"v1.0.0","commit":{"sha":"a"}}]`,
			"Link", `<{{server}}`+tags+`?page=2&per_page=100>; rel="next"`)
	}
	c, err := New("t", r.URL())
	if err != nil {
		t.Fatal(err)
	}
	err = c.Tags(t.Context(), "acme", "app", func(Ref) bool { return true })
	if err == nil || err.Error() != "listing the tags of acme/app: GitHub gave page 2 again" {
		t.Fatalf("error = %v", err)
	}
}

// A repository GitHub does not let the token read is ErrNoPermission.
func TestOpenPullsNoPermission(t *testing.T) {
	r := newRegistry(t)
	r.register("GET", "/repos/acme/private/pulls", "", http.StatusNotFound, `{"message":"Not Found"}`)
	c, err := New("t", r.URL())
	if err != nil {
		t.Fatal(err)
	}
	err = c.OpenPulls(t.Context(), "acme", "private", func(Pull) bool { return true })
	if !errors.Is(err, ErrNoPermission) {
		t.Fatalf("error = %v, want ErrNoPermission", err)
	}
}

func TestWebURL(t *testing.T) {
	for api, want := range map[string]string{
		"":                            "https://github.com",
		"https://api.github.com":      "https://github.com",
		"https://ghe.example/api/v3":  "https://ghe.example",
		"http://127.0.0.1:8080/":      "http://127.0.0.1:8080",
		"https://ghe.example:8443/x/": "https://ghe.example:8443",
		"https://api.acme.ghe.com":    "https://acme.ghe.com",
	} {
		c, err := New("t", api)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.WebURL(); got != want {
			t.Errorf("WebURL of %q = %q, want %q", api, got, want)
		}
	}
	// The job's GITHUB_SERVER_URL wins: its API may be anywhere.
	c, err := New("t", "http://127.0.0.1:8080/", WithServerURL("https://github.example/"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.WebURL(); got != "https://github.example" {
		t.Errorf("WebURL with a server URL = %q", got)
	}
}
