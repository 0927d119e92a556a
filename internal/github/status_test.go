package github

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestSetStatus(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("POST", "/repos/o/r/statuses/0123abcd", "", 201, `{"id":1,"state":"failure"}`)
	c := newClient(t, reg.URL())

	err := c.SetStatus(context.Background(), "o", "r", "0123abcd", Status{
		State: StateFailure, Context: "kustomize-deploy/web",
		Description: "HealthCheckFailed: Deployment/shop/web not ready",
		TargetURL:   "https://github.com/o/r/actions/runs/42",
	})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(reg.Calls()[0].Body), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"state": "failure", "context": "kustomize-deploy/web",
		"description": "HealthCheckFailed: Deployment/shop/web not ready",
		"target_url":  "https://github.com/o/r/actions/runs/42",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status body mismatch (-want +got):\n%s", diff)
	}
	if auth := reg.Calls()[0].Header.Get("Authorization"); auth != "Bearer "+token {
		t.Errorf("Authorization %q, want the bearer token", auth)
	}
}

func TestSetStatusTruncatesDescription(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("POST", "/repos/o/r/statuses/abc", "", 201, `{}`)
	c := newClient(t, reg.URL())

	long := strings.Repeat("é", 200)
	if err := c.SetStatus(context.Background(), "o", "r", "abc", Status{State: StateError, Context: "kustomize-deploy/web", Description: long}); err != nil {
		t.Fatal(err)
	}
	var got struct{ Description string }
	if err := json.Unmarshal([]byte(reg.Calls()[0].Body), &got); err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(got.Description); n != 140 || !strings.HasSuffix(got.Description, "é…") {
		t.Errorf("description of %d characters %q, want 139 of the original and …", n, got.Description)
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 140, "short"},
		{strings.Repeat("a", 140), 140, strings.Repeat("a", 140)},
		{strings.Repeat("a", 141), 140, strings.Repeat("a", 139) + "…"},
		{"héllo wörld", 5, "héll…"},
	} {
		if got := truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestSetStatusRejectsBadInput(t *testing.T) {
	t.Parallel()
	c := newClient(t, newRegistry(t).URL()) // no stubs: nothing may be sent
	for _, s := range []Status{
		{State: "ok", Context: "kustomize-deploy/web"},
		{State: StateSuccess},
	} {
		if err := c.SetStatus(context.Background(), "o", "r", "abc", s); err == nil {
			t.Errorf("%+v was accepted", s)
		}
	}
}
