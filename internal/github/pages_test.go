package github

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A report that shrinks from three pages to two edits its own pages 1
// and 2 and deletes its page 3; a comment by someone else carrying a page
// marker is left alone. One that grows creates the pages it lacks.
func TestSyncCommentsKeepsPagesInStep(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	const list = "/repos/o/r/issues/7/comments"
	comment := func(id int, body, login string) string {
		return fmt.Sprintf(`{"id":%d,"body":%q,"user":{"login":%q}}`, id, body, login)
	}
	existing := "[" + strings.Join([]string{
		comment(10, PageMarker(marker, 2)+"\nplanted", "mallory"),
		comment(11, marker+"\nold 1", "deployer"),
		comment(12, PageMarker(marker, 2)+"\nold 2", "deployer"),
		comment(13, PageMarker(marker, 3)+"\nold 3", "deployer"),
	}, ",") + "]"
	reg.register("GET", "/user", "", 200, `{"login":"deployer"}`)
	reg.register("GET", list, "per_page=100", 200, existing)
	reg.register("PATCH", "/repos/o/r/issues/comments/11", "", 200, `{"id":11}`)
	reg.register("PATCH", "/repos/o/r/issues/comments/12", "", 200, `{"id":12}`)
	reg.register("DELETE", "/repos/o/r/issues/comments/13", "", 204, ``)
	c := newClient(t, reg.URL())

	got, err := c.SyncComments(context.Background(), "o", "r", 7, marker, []string{"page one", PageMarker(marker, 2) + "\npage two"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Comment{{ID: 11}, {ID: 12}}, got); diff != "" {
		t.Errorf("comments mismatch (-want +got):\n%s", diff)
	}
	calls := reg.Calls()
	var did []string
	for _, call := range calls[2:] {
		did = append(did, call.Method+" "+call.Path)
	}
	want := []string{"PATCH /repos/o/r/issues/comments/11", "PATCH /repos/o/r/issues/comments/12", "DELETE /repos/o/r/issues/comments/13"}
	if diff := cmp.Diff(want, did); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
	if b := bodyOf(t, calls[2]); b != marker+"\npage one" {
		t.Errorf("page 1 body %q: the marker was not prepended", b)
	}

	grow := newRegistry(t)
	grow.register("GET", "/user", "", 200, `{"login":"deployer"}`)
	grow.register("GET", list, "per_page=100", 200, "["+comment(11, marker+"\nold 1", "deployer")+"]")
	grow.register("PATCH", "/repos/o/r/issues/comments/11", "", 200, `{"id":11}`)
	grow.register("POST", list, "", 201, `{"id":20}`)
	grow.register("POST", list, "", 201, `{"id":21}`)
	c = newClient(t, grow.URL())
	got, err = c.SyncComments(context.Background(), "o", "r", 7, marker, []string{"1", "2", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Comment{{ID: 11}, {ID: 20, Created: true}, {ID: 21, Created: true}}, got); diff != "" {
		t.Errorf("comments mismatch (-want +got):\n%s", diff)
	}
	posts := grow.Calls()[3:]
	if len(posts) != 2 || !strings.HasPrefix(bodyOf(t, posts[0]), PageMarker(marker, 2)+"\n") || !strings.HasPrefix(bodyOf(t, posts[1]), PageMarker(marker, 3)+"\n") {
		t.Errorf("created pages lack their markers: %v", posts)
	}
}

func TestPageOf(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]int{
		marker + "\nx":                               1,
		PageMarker(marker, 2) + "\nx":                2,
		PageMarker(marker, 12):                       12,
		"<!-- kustomize-deploy:unit=webapp -->":      0,
		"<!-- kustomize-deploy:unit=web page=x -->":  0,
		"<!-- kustomize-deploy:unit=web page=1 -->":  0,
		"<!-- kustomize-deploy:unit=web page=02 -->": 0,
		"plain": 0,
		// Only the first line, exactly: a diff may quote a manifest
		// holding another unit's marker.
		"<!-- kustomize-deploy:unit=api -->\n+  note: " + marker:       0,
		"<!-- kustomize-deploy:unit=api -->\n" + PageMarker(marker, 2): 0,
		" " + marker:         0,
		marker + " and more": 0,
		marker + "\r\nx":     1,
	} {
		if got := pageOf(marker, body); got != want {
			t.Errorf("pageOf(%q) = %d, want %d", body, got, want)
		}
	}
}
