package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A diff that rendered only the units its change reaches says so in one
// line, naming the units not affected (a few, then how many more), in
// the comment and in the text; not one row per unit.
func TestReachLine(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 25 {
		names = append(names, fmt.Sprintf("app-%03d", i))
	}
	r := &result.Reach{Base: "0123456789abcdef0123", ChangedFiles: 1, Units: 26, Rendered: 1, NotAffected: 25, NotAffectedUnits: names}
	res := &result.Result{Unit: "web", Mode: result.ModeDiff, Ready: true, Reason: result.ReasonOfflineDiffSucceed}
	md := Markdown([]*result.Result{res}, MarkdownOptions{Reach: r})
	want := "**1 of 26 units rendered**: the change since `0123456789ab` (1 file(s)) reaches only those; not affected (25): app-000, app-001,"
	if !strings.Contains(md, want) || !strings.Contains(md, "app-019, … (5 more).") || strings.Contains(md, "app-020") {
		t.Errorf("markdown:\n%s", md)
	}
	if strings.Count(md, "app-0") != 20 || strings.Contains(md, "| app-000") {
		t.Errorf("the units not affected are rows, or named more than once:\n%s", md)
	}
	if md := Markdown([]*result.Result{res}, MarkdownOptions{}); strings.Contains(md, "units rendered") {
		t.Errorf("no reach, a line:\n%s", md)
	}
	var b bytes.Buffer
	TextSet(&b, &result.Set{Mode: result.ModeDiff, Units: []*result.Result{res}, Reach: r}, true)
	if !strings.Contains(b.String(), "1 of 26 units rendered: the change since 0123456789ab (1 file(s)) reaches only those; not affected (25): app-000") {
		t.Errorf("text:\n%s", b.String())
	}
}
