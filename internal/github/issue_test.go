package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	issueMarker = "<!-- kustomize-deploy:drift unit=web cluster=prod -->"
	issueLabel  = "kustomize-deploy/drift"
	issues      = "/repos/o/r/issues"
	// listQuery is what FindIssue asks for: open issues with the label,
	// oldest first.
	listQuery = "state=open&labels=kustomize-deploy/drift&sort=created&direction=asc&per_page=100"
)

var spec = IssueSpec{
	Label: issueLabel, LabelColor: "d93f0b", LabelDescription: "the cluster differs from Git",
	Marker: issueMarker, Title: "Drift: web (prod)", Body: "1 object differs",
}

func jsonOf(t *testing.T, c call) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(c.Body), &v); err != nil {
		t.Fatalf("%s %s: body %q: %v", c.Method, c.Path, c.Body, err)
	}
	return v
}

// issueJSON is an issue as GitHub lists it.
func issueJSON(number int, body, author string, extra ...string) string {
	s := fmt.Sprintf(`{"number":%d,"body":%q,"user":{"login":%q},"html_url":"https://github.com/o/r/issues/%d"`, number, body, author, number)
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

// No issue yet: the label is created, then the issue with title, label
// and a body that starts with the marker. Passed over: a pull request
// whose body has the marker, someone else's issue with the marker, our
// issue of another cluster.
func TestUpsertIssueCreates(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("GET", "/user", "", 200, `{"login":"deployer"}`)
	reg.register("GET", issues, listQuery, 200, "["+
		issueJSON(1, issueMarker, "deployer", `"pull_request":{"url":"https://api.github.com/repos/o/r/pulls/1"}`)+","+
		issueJSON(2, issueMarker+"\nplanted", "mallory")+","+
		issueJSON(3, "<!-- kustomize-deploy:drift unit=web cluster=staging -->", "deployer")+"]")
	reg.register("POST", "/repos/o/r/labels", "", 201, `{"name":"kustomize-deploy/drift"}`)
	reg.register("POST", issues, "", 201, `{"number":4,"html_url":"https://github.com/o/r/issues/4","labels":[{"name":"kustomize-deploy/drift"}]}`)
	c := newClient(t, reg.URL())

	got, err := c.UpsertIssue(context.Background(), "o", "r", spec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Issue{Number: 4, URL: "https://github.com/o/r/issues/4", Created: true}, got); diff != "" {
		t.Errorf("upserted issue mismatch (-want +got):\n%s", diff)
	}
	calls := reg.Calls()
	label := map[string]any{"name": issueLabel, "color": "d93f0b", "description": "the cluster differs from Git"}
	if diff := cmp.Diff(label, jsonOf(t, calls[2])); diff != "" {
		t.Errorf("label mismatch (-want +got):\n%s", diff)
	}
	created := map[string]any{"title": "Drift: web (prod)", "body": issueMarker + "\n1 object differs", "labels": []any{issueLabel}}
	if diff := cmp.Diff(created, jsonOf(t, calls[3])); diff != "" {
		t.Errorf("created issue mismatch (-want +got):\n%s", diff)
	}
}

// Our open issue, on the second page, is edited: the body only, so a
// title people changed stays. Another of ours that holds the marker but
// not on its first line (a diff quoting a manifest that holds it) is
// another unit's, and someone else's is nobody's. A label that already
// exists is not an error (GitHub answers 422).
func TestUpsertIssueEditsOurs(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("GET", "/user", "", 403, `{"message":"Resource not accessible by integration"}`)
	reg.register("POST", "/graphql", "", 200, `{"data":{"viewer":{"login":"github-actions"}}}`)
	reg.register("GET", issues, listQuery, 200, "["+issueJSON(2, issueMarker, "mallory")+","+issueJSON(3, "<!-- kustomize-deploy:drift unit=api -->\n```\n+  note: "+issueMarker+"\n```", "github-actions[bot]")+"]",
		"Link", `<{{server}}`+issues+`?page=2&per_page=100>; rel="next"`)
	reg.register("GET", issues, "page=2", 200, "["+issueJSON(9, issueMarker+"\nold", "github-actions[bot]")+"]")
	reg.register("PATCH", issues+"/9", "", 200, `{"number":9,"html_url":"https://github.com/o/r/issues/9"}`)
	c := newClient(t, reg.URL())

	got, err := c.UpsertIssue(context.Background(), "o", "r", spec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Issue{Number: 9, URL: "https://github.com/o/r/issues/9"}, got); diff != "" {
		t.Errorf("upserted issue mismatch (-want +got):\n%s", diff)
	}
	calls := reg.Calls()
	if diff := cmp.Diff(map[string]any{"body": issueMarker + "\n1 object differs"}, jsonOf(t, calls[len(calls)-1])); diff != "" {
		t.Errorf("edit mismatch, want the body only (-want +got):\n%s", diff)
	}
}

func TestUpsertIssueLabelExists(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("GET", "/user", "", 200, `{"login":"deployer"}`)
	reg.register("GET", issues, listQuery, 200, `[]`)
	reg.register("POST", "/repos/o/r/labels", "", 422, `{"message":"Validation Failed","errors":[{"resource":"Label","code":"already_exists","field":"name"}]}`)
	reg.register("POST", issues, "", 201, `{"number":4,"labels":[{"name":"kustomize-deploy/drift"}]}`)
	c := newClient(t, reg.URL())

	if got, err := c.UpsertIssue(context.Background(), "o", "r", spec); err != nil || got.Number != 4 || !got.Created {
		t.Errorf("upserted %+v %v, want issue 4 created", got, err)
	}
}

// GitHub drops the labels of an issue created by a token without push
// access: the label is added afterwards, and when that is refused too the
// error says later runs will not find the issue.
func TestUpsertIssueLabelDropped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
	}{{"added afterwards", 200}, {"refused", 403}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := newRegistry(t)
			reg.register("GET", "/user", "", 200, `{"login":"deployer"}`)
			reg.register("GET", issues, listQuery, 200, `[]`)
			reg.register("POST", "/repos/o/r/labels", "", 201, `{}`)
			reg.register("POST", issues, "", 201, `{"number":5,"labels":[]}`)
			reg.register("POST", issues+"/5/labels", "", tc.status, `[{"name":"kustomize-deploy/drift"}]`)
			c := newClient(t, reg.URL())

			got, err := c.UpsertIssue(context.Background(), "o", "r", spec)
			if got.Number != 5 || !got.Created {
				t.Errorf("upserted %+v, want issue 5 created", got)
			}
			if tc.status == 200 {
				if err != nil {
					t.Error(err)
				}
				return
			}
			if !errors.Is(err, ErrUnlabelled) || !errors.Is(err, ErrNoPermission) {
				t.Errorf("error %v, want ErrUnlabelled and ErrNoPermission", err)
			}
			var added []string
			if err := json.Unmarshal([]byte(reg.Calls()[4].Body), &added); err != nil {
				t.Fatalf("labels added %q: %v", reg.Calls()[4].Body, err)
			}
			if diff := cmp.Diff([]string{issueLabel}, added); diff != "" {
				t.Errorf("labels added mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A token without "issues: write": refused, nothing created.
func TestUpsertIssueForbidden(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("GET", "/user", "", 200, `{"login":"deployer"}`)
	reg.register("GET", issues, listQuery, 200, `[]`)
	reg.register("POST", "/repos/o/r/labels", "", 403, `{"message":"Resource not accessible by integration"}`)
	reg.register("POST", issues, "", 403, `{"message":"Resource not accessible by integration"}`)
	c := newClient(t, reg.URL())

	got, err := c.UpsertIssue(context.Background(), "o", "r", spec)
	if !errors.Is(err, ErrNoPermission) || got.Number != 0 {
		t.Errorf("upserted %+v %v, want ErrNoPermission and no issue", got, err)
	}
}

func TestFindIssueRejectsEmptyMarker(t *testing.T) {
	t.Parallel()
	c := newClient(t, newRegistry(t).URL())
	if _, err := c.FindIssue(context.Background(), "o", "r", issueLabel, ""); err == nil {
		t.Error("an empty marker was accepted")
	}
}

// Closing says why first: the comment, then the state.
func TestCloseIssue(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("POST", issues+"/9/comments", "", 201, `{"id":1}`)
	reg.register("PATCH", issues+"/9", "", 200, `{"number":9,"state":"closed"}`)
	c := newClient(t, reg.URL())

	if err := c.CloseIssue(context.Background(), "o", "r", 9, "matches Git again"); err != nil {
		t.Fatal(err)
	}
	calls := reg.Calls()
	if got := bodyOf(t, calls[0]); got != "matches Git again" {
		t.Errorf("comment %q", got)
	}
	if diff := cmp.Diff(map[string]any{"state": "closed", "state_reason": "completed"}, jsonOf(t, calls[1])); diff != "" {
		t.Errorf("close mismatch (-want +got):\n%s", diff)
	}
}

// A refused comment leaves the issue open: it is never closed without
// saying why.
func TestCloseIssueCommentRefused(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("POST", issues+"/9/comments", "", 403, `{"message":"Resource not accessible by integration"}`)
	c := newClient(t, reg.URL())

	if err := c.CloseIssue(context.Background(), "o", "r", 9, "matches Git again"); !errors.Is(err, ErrNoPermission) {
		t.Errorf("error %v, want ErrNoPermission", err)
	}
	if n := len(reg.Calls()); n != 1 {
		t.Errorf("%d requests, want the comment only", n)
	}
}
