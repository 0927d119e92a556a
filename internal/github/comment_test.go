package github

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

const marker = "<!-- kustomize-deploy:unit=web -->"

func bodyOf(t *testing.T, c call) string {
	t.Helper()
	var v struct{ Body string }
	if err := json.Unmarshal([]byte(c.Body), &v); err != nil {
		t.Fatalf("%s %s: body %q: %v", c.Method, c.Path, c.Body, err)
	}
	return v.Body
}

// A sticky comment: the first run creates it, the second finds it on the
// second page of comments and edits it.
func TestUpsertCommentCreatesThenEdits(t *testing.T) {
	reg := newRegistry(t)
	const list = "/repos/o/r/issues/7/comments"
	// run 1
	reg.register("GET", list, "per_page=100", 200, `[{"id":1,"body":"LGTM"}]`)
	reg.register("POST", list, "", 201, `{"id":555,"body":"x","html_url":"https://github.com/o/r/pull/7#issuecomment-555"}`)
	// run 2
	reg.register("GET", list, "per_page=100", 200, `[{"id":1,"body":"LGTM"},{"id":2,"body":"kustomize-deploy is great"}]`,
		"Link", `<{{server}}`+list+`?page=2&per_page=100>; rel="next", <{{server}}`+list+`?page=2&per_page=100>; rel="last"`)
	reg.register("GET", list, "per_page=100&page=2", 200, fmt.Sprintf(`[{"id":3,"body":"ship it"},{"id":555,"body":%q}]`, marker+"\nold"))
	reg.register("PATCH", "/repos/o/r/issues/comments/555", "", 200, `{"id":555,"body":"x","html_url":"https://github.com/o/r/pull/7#issuecomment-555"}`)
	c := newClient(t, reg.URL())
	ctx := context.Background()

	first, err := c.UpsertComment(ctx, "o", "r", 7, marker, marker+"\nrun 1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.UpsertComment(ctx, "o", "r", 7, marker, marker+"\nrun 2")
	if err != nil {
		t.Fatal(err)
	}

	url := "https://github.com/o/r/pull/7#issuecomment-555"
	if want := (Comment{ID: 555, Created: true, URL: url}); first != want {
		t.Errorf("first run: %+v, want %+v", first, want)
	}
	if want := (Comment{ID: 555, Created: false, URL: url}); second != want {
		t.Errorf("second run: %+v, want %+v", second, want)
	}
	calls := reg.Calls()
	if len(calls) != 5 {
		t.Fatalf("%d requests, want 5", len(calls))
	}
	for _, c := range calls {
		if got := c.Header.Get("Authorization"); got != "Bearer "+token {
			t.Errorf("%s %s: Authorization %q, want the bearer token", c.Method, c.Path, got)
		}
	}
	if got := calls[2].Query.Get("page"); got != "" {
		t.Errorf("first page requested with page=%s", got)
	}
	if got := bodyOf(t, calls[1]); got != marker+"\nrun 1" {
		t.Errorf("created body %q", got)
	}
	if got := bodyOf(t, calls[4]); got != marker+"\nrun 2" {
		t.Errorf("edited body %q", got)
	}
}

func TestUpsertCommentAddsMissingMarker(t *testing.T) {
	reg := newRegistry(t)
	reg.register("GET", "/repos/o/r/issues/7/comments", "per_page=100", 200, `[]`)
	reg.register("POST", "/repos/o/r/issues/7/comments", "", 201, `{"id":9}`)
	c := newClient(t, reg.URL())

	if _, err := c.UpsertComment(context.Background(), "o", "r", 7, marker, "no changes"); err != nil {
		t.Fatal(err)
	}
	if got := bodyOf(t, reg.Calls()[1]); got != marker+"\nno changes" {
		t.Errorf("created body %q, want the marker first", got)
	}
}

func TestUpsertCommentRejectsEmptyMarker(t *testing.T) {
	c := newClient(t, newRegistry(t).URL())
	if _, err := c.UpsertComment(context.Background(), "o", "r", 7, "", "body"); err == nil {
		t.Error("an empty marker was accepted")
	}
}

func TestUpsertCommentUpdateError(t *testing.T) {
	reg := newRegistry(t)
	reg.register("GET", "/repos/o/r/issues/7/comments", "per_page=100", 200, fmt.Sprintf(`[{"id":123,"body":%q}]`, marker))
	reg.register("PATCH", "/repos/o/r/issues/comments/123", "", 422, `{"message":"Validation Failed"}`)
	c := newClient(t, reg.URL())

	_, err := c.UpsertComment(context.Background(), "o", "r", 7, marker, marker+"\nbody")
	want := "updating comment 123 on o/r#7: PATCH " + reg.URL() + "/repos/o/r/issues/comments/123: 422 Validation Failed []"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
