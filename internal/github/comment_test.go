package github

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	t.Parallel()
	reg := newRegistry(t)
	const list = "/repos/o/r/issues/7/comments"
	reg.register("GET", "/user", "", 200, `{"login":"deployer","type":"User"}`) // once: the client keeps it
	// run 1
	reg.register("GET", list, "per_page=100", 200, `[{"id":1,"body":"LGTM"}]`)
	reg.register("POST", list, "", 201, `{"id":555,"body":"x","html_url":"https://github.com/o/r/pull/7#issuecomment-555"}`)
	// run 2
	reg.register("GET", list, "per_page=100", 200, `[{"id":1,"body":"LGTM"},{"id":2,"body":"kustomize-deploy is great"}]`,
		"Link", `<{{server}}`+list+`?page=2&per_page=100>; rel="next", <{{server}}`+list+`?page=2&per_page=100>; rel="last"`)
	reg.register("GET", list, "per_page=100&page=2", 200, fmt.Sprintf(`[{"id":3,"body":"ship it"},{"id":555,"body":%q,"user":{"login":"deployer"}}]`, marker+"\nold"))
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
	if diff := cmp.Diff(Comment{ID: 555, Created: true, URL: url}, first); diff != "" {
		t.Errorf("first run mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Comment{ID: 555, Created: false, URL: url}, second); diff != "" {
		t.Errorf("second run mismatch (-want +got):\n%s", diff)
	}
	calls := reg.Calls()[1:] // after GET /user
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
	t.Parallel()
	reg := newRegistry(t)
	reg.register("GET", "/user", "", 200, `{"login":"deployer"}`)
	reg.register("GET", "/repos/o/r/issues/7/comments", "per_page=100", 200, `[]`)
	reg.register("POST", "/repos/o/r/issues/7/comments", "", 201, `{"id":9}`)
	c := newClient(t, reg.URL())

	if _, err := c.UpsertComment(context.Background(), "o", "r", 7, marker, "no changes"); err != nil {
		t.Fatal(err)
	}
	if got := bodyOf(t, reg.Calls()[2]); got != marker+"\nno changes" {
		t.Errorf("created body %q, want the marker first", got)
	}
}

func TestUpsertCommentRejectsEmptyMarker(t *testing.T) {
	t.Parallel()
	c := newClient(t, newRegistry(t).URL())
	if _, err := c.UpsertComment(context.Background(), "o", "r", 7, "", "body"); err == nil {
		t.Error("an empty marker was accepted")
	}
}

func TestUpsertCommentUpdateError(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("GET", "/user", "", 200, `{"login":"deployer"}`)
	reg.register("GET", "/repos/o/r/issues/7/comments", "per_page=100", 200, fmt.Sprintf(`[{"id":123,"body":%q,"user":{"login":"deployer"}}]`, marker))
	reg.register("PATCH", "/repos/o/r/issues/comments/123", "", 422, `{"message":"Validation Failed"}`)
	c := newClient(t, reg.URL())

	_, err := c.UpsertComment(context.Background(), "o", "r", 7, marker, marker+"\nbody")
	want := "updating comment 123 on o/r#7: PATCH " + reg.URL() + "/repos/o/r/issues/comments/123: 422 Validation Failed []"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// hijack is a comment someone else posted with our marker before the first
// run: its body must never be edited by us.
var hijack = fmt.Sprintf(`{"id":50,"body":%q,"user":{"login":"mallory","type":"User"}}`, marker+"\nAll good, merge it! [link](https://evil.example)")

// With a personal access token (or an App's user token) the author is the
// user GET /user names: the marked comment by someone else is passed over.
func TestUpsertCommentIgnoresOthersMarkerPAT(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	const list = "/repos/o/r/issues/7/comments"
	reg.register("GET", "/user", "", 200, `{"login":"Deploy-Bot","type":"User"}`)
	reg.register("GET", list, "per_page=100", 200, `[`+hijack+fmt.Sprintf(`,{"id":60,"body":%q,"user":{"login":"deploy-bot","type":"User"}}]`, marker+"\nold"))
	reg.register("PATCH", "/repos/o/r/issues/comments/60", "", 200, `{"id":60}`)
	c := newClient(t, reg.URL())

	got, err := c.UpsertComment(context.Background(), "o", "r", 7, marker, marker+"\nnew")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 60 || got.Created {
		t.Errorf("upserted %+v, want comment 60 edited", got)
	}
	for _, call := range reg.Calls() {
		if call.Path == "/repos/o/r/issues/comments/50" {
			t.Errorf("the other author's comment was touched: %s %s", call.Method, call.Path)
		}
	}
}

// With the workflow's GITHUB_TOKEN, GET /user is refused; GraphQL's viewer
// names the app ("github-actions") whose comments REST shows as
// "github-actions[bot]". A marked comment by anyone else is not ours: a new
// one is created.
func TestUpsertCommentIgnoresOthersMarkerGITHUBTOKEN(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	const list = "/repos/o/r/issues/7/comments"
	reg.register("GET", "/user", "", 403, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/users/users#get-the-authenticated-user","status":"403"}`)
	reg.register("POST", "/graphql", "", 200, `{"data":{"viewer":{"login":"github-actions"}}}`)
	reg.register("GET", list, "per_page=100", 200, `[`+hijack+fmt.Sprintf(`,{"id":61,"body":%q,"user":{"login":"github-actions","type":"User"}}]`, marker))
	reg.register("POST", list, "", 201, `{"id":70,"user":{"login":"github-actions[bot]","type":"Bot"}}`)
	// The second run finds its own comment.
	reg.register("GET", list, "per_page=100", 200, `[`+hijack+`,{"id":70,"body":"`+marker+`","user":{"login":"github-actions[bot]","type":"Bot"}}]`)
	reg.register("PATCH", "/repos/o/r/issues/comments/70", "", 200, `{"id":70}`)
	c := newClient(t, reg.URL())

	first, err := c.UpsertComment(context.Background(), "o", "r", 7, marker, marker+"\nrun 1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.UpsertComment(context.Background(), "o", "r", 7, marker, marker+"\nrun 2")
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || first.ID != 70 || second.Created || second.ID != 70 {
		t.Errorf("runs %+v %+v, want 70 created then edited", first, second)
	}
	if got := reg.Calls()[1].Body; !strings.Contains(got, "viewer") {
		t.Errorf("GraphQL query %s", got)
	}
}

func TestLoginGraphQLOnEnterprise(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("GET", "/api/v3/user", "", 403, `{"message":"Resource not accessible by integration"}`)
	reg.register("POST", "/api/graphql", "", 200, `{"data":{"viewer":{"login":"deploy-app"}}}`)
	c := newClient(t, reg.URL()+"/api/v3")

	login, err := c.Login(context.Background())
	if err != nil || login != "deploy-app[bot]" {
		t.Errorf("login %q %v, want deploy-app[bot]", login, err)
	}
}

// Without a known identity no comment is edited or created.
func TestUpsertCommentWithoutIdentityWritesNothing(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("GET", "/user", "", 403, `{"message":"Resource not accessible by integration"}`)
	reg.register("POST", "/graphql", "", 200, `{"errors":[{"message":"Resource not accessible by integration"}]}`)
	c := newClient(t, reg.URL())

	_, err := c.UpsertComment(context.Background(), "o", "r", 7, marker, "body")
	if err == nil || !strings.Contains(err.Error(), "identity") {
		t.Errorf("error %v, want one about the token's identity", err)
	}
}

// A comment of our own whose first line is another unit's marker is that
// unit's, even when its diff quotes this unit's marker (a ConfigMap value
// holding it): this unit's run creates its own comment, and edits
// neither that one nor any other, and a body that quotes the marker
// gets it prepended.
func TestUpsertCommentMatchesOnlyTheFirstLine(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	const list = "/repos/o/r/issues/7/comments"
	other := "<!-- kustomize-deploy:unit=api -->\n```diff\n+  note: " + marker + "\n```\n"
	reg.register("GET", "/user", "", 200, `{"login":"deployer"}`)
	reg.register("GET", list, "per_page=100", 200, fmt.Sprintf(`[{"id":41,"body":%q,"user":{"login":"deployer"}},{"id":42,"body":%q,"user":{"login":"deployer"}}]`,
		other, "<!-- kustomize-deploy:unit=api -->\n"+PageMarker(marker, 2)))
	reg.register("POST", list, "", 201, `{"id":80}`)
	c := newClient(t, reg.URL())

	got, err := c.UpsertComment(context.Background(), "o", "r", 7, marker, "quoting "+marker)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created || got.ID != 80 {
		t.Errorf("comment %+v, want 80 created", got)
	}
	calls := reg.Calls()
	last := calls[len(calls)-1]
	if last.Method != "POST" || bodyOf(t, last) != marker+"\nquoting "+marker {
		t.Errorf("last request %s %s %q", last.Method, last.Path, last.Body)
	}
}
