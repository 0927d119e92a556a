package report

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

const commentLimit = 65536 // GitHub's limit on a comment body

var prOptions = MarkdownOptions{
	Title:   "kustomize-deploy apply",
	Marker:  "<!-- kustomize-deploy:unit=web -->",
	RunURL:  "https://github.com/o/r/actions/runs/42",
	Compact: true,
}

// noChange is a unit whose cluster already matches the revision.
func noChange(unit string) *result.Result {
	r := &result.Result{Unit: unit, Mode: "diff", Revision: "abc123", Ready: true, Reason: "DiffSucceed", Validation: result.ValidationServer, Message: "dry-run of revision abc123", Duration: "0.4s",
		Entries: []result.Entry{
			{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: unit}, Stage: result.StageResources, Action: result.Unchanged, Source: unit + ".yaml"},
		}}
	r.Tally()
	return r
}

// failedBefore is a unit that failed with reason before anything was applied.
func failedBefore(unit string, reason result.Reason, message string, entries ...result.Entry) *result.Result {
	r := &result.Result{Unit: unit, Mode: "apply", Revision: "abc123", Reason: reason, Message: message, Entries: entries}
	if reason == result.ReasonValidationFailed {
		r.Validation = result.ValidationServer
	}
	r.Tally()
	return r
}

// awkward holds text that must be escaped: backtick runs in a diff, table
// and emphasis characters in reasons and sources.
func awkward() *result.Result {
	r := &result.Result{Unit: "docs", Mode: "diff", Revision: "abc123", Ready: true, Reason: "DiffSucceed", Validation: result.ValidationClient, Entries: []result.Entry{
		{Object: object.ID{Kind: "ConfigMap", Namespace: "docs", Name: "readme"}, Stage: result.StageResources, Action: result.Configured, Source: "docs/<readme>_v2.yaml",
			Diff: "--- ConfigMap/docs/readme (live)\n+++ ConfigMap/docs/readme (desired)\n@@ -1,3 +1,3 @@\n   README.md: |\n-    ```sh\n+    ````sh\n     make | tee *log*\n"},
		{Object: object.ID{Kind: "Secret", Namespace: "docs", Name: "token"}, Stage: result.StagePrune, Action: result.Skipped, Reason: "annotated `prune: disabled` | kept *as is*"},
	}}
	r.Tally()
	return r
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		results []*result.Result
		opts    MarkdownOptions
	}{
		{"markdown-apply-succeeded", []*result.Result{sample(true)}, prOptions},
		{"markdown-apply-failed", []*result.Result{sample(false)}, prOptions},
		{"markdown-apply-rollback", []*result.Result{rolledBack(sample(true))}, prOptions},
		{"markdown-no-changes", []*result.Result{noChange("web"), noChange("api")}, prOptions},
		{"markdown-units", []*result.Result{
			sample(true),
			failedBefore("api", "ValidationFailed", "ConfigMap/shop/api dry-run failed (api.yaml): data.port: Invalid value: 80: must be a string",
				result.Entry{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "api"}, Stage: result.StageResources, Action: result.Failed, Source: "api.yaml", Reason: "data.port: Invalid value: 80: must be a string"}),
			failedBefore("db", "BuildFailed", "kustomize build failed: accumulating resources: 'db/missing.yaml' does not exist"),
			failedBefore("jobs", "DependencyNotReady", "dependency 'db' is not ready (BuildFailed: kustomize build failed)"),
		}, MarkdownOptions{Title: "kustomize-deploy"}},
		{"markdown-escaping", []*result.Result{awkward()}, MarkdownOptions{}},
		{"markdown-failed-one-cause", []*result.Result{missingNamespace(50)}, prOptions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			golden(t, filepath.Join("testdata", tc.name+".golden"), []byte(Markdown(tc.results, tc.opts)))
		})
	}
}

// bigDiffs is one unit whose objects have diffs of the given sizes in KB.
func bigDiffs(kb ...int) *result.Result {
	r := &result.Result{Unit: "web", Mode: "diff", Revision: "abc123", Ready: true, Reason: "DiffSucceed"}
	for i, n := range kb {
		name := fmt.Sprintf("web-%d", i)
		line := fmt.Sprintf("+  key: %s\n", strings.Repeat("x", 90))
		r.Entries = append(r.Entries, result.Entry{
			Object: object.ID{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: name}, Stage: result.StageResources,
			Action: result.Configured, Source: name + ".yaml",
			Diff: "--- live\n+++ desired\n" + strings.Repeat(line, n*1024/len(line)),
		})
	}
	r.Tally()
	return r
}

func TestMarkdownDropsLargestDiffsFirst(t *testing.T) {
	t.Parallel()
	r := bigDiffs(40, 42, 41)
	opts := prOptions
	opts.MaxBytes = commentLimit

	body := Markdown([]*result.Result{r}, opts)

	if len(body) > commentLimit {
		t.Fatalf("body is %d bytes, over %d", len(body), commentLimit)
	}
	for _, want := range []string{
		opts.Marker,
		"| unit | result | created | configured | deleted | unchanged | skipped | failed | validation |",
		"| web | ✅ DiffSucceed | 0 | 3 | 0 | 0 | 0 | 0 | — |",
		`<details><summary>2 diffs not shown here (too large): see <a href="https://github.com/o/r/actions/runs/42">the job summary</a></summary>`,
		"- 2 × configured `Deployment` in `shop` (" + thousands(len(r.Entries[1].Diff)+len(r.Entries[2].Diff)) + " characters): `web-1`, `web-2`\n",
		"<details><summary>configured <code>Deployment/shop/web-0</code> (web-0.yaml)</summary>",
		r.Entries[0].Diff,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %.120q", want)
		}
	}
	if strings.Contains(body, "`Deployment/shop/web-0` (") {
		t.Errorf("the smallest diff was dropped; only the largest ones should be")
	}
	if strings.Contains(body, "Truncated") {
		t.Errorf("body was truncated although dropping diffs was enough")
	}
}

func TestMarkdownDropsOnlyWhatIsNeeded(t *testing.T) {
	t.Parallel()
	r := bigDiffs(20, 30, 25)
	body := Markdown([]*result.Result{r}, MarkdownOptions{MaxBytes: commentLimit})

	if len(body) > commentLimit {
		t.Fatalf("body is %d bytes, over %d", len(body), commentLimit)
	}
	if !strings.Contains(body, "`Deployment/shop/web-1` (") || strings.Contains(body, r.Entries[1].Diff) {
		t.Errorf("the largest diff (30 KB) was kept")
	}
	for _, kept := range []string{r.Entries[0].Diff, r.Entries[2].Diff} {
		if !strings.Contains(body, kept) {
			t.Errorf("a diff that fits was dropped")
		}
	}
}

func TestMarkdownTruncatesWhenNotesAreNotEnough(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 5000 {
		lines = append(lines, fmt.Sprintf("  - Deployment/shop/web-%04d: InProgress: Deployment is progressing ✓", i))
	}
	r := failedBefore("web", "HealthCheckFailed", "timeout waiting for 5000 object(s):\n"+strings.Join(lines, "\n"))

	body := Markdown([]*result.Result{r}, MarkdownOptions{Marker: "<!-- m -->", MaxBytes: commentLimit})

	if len(body) > commentLimit {
		t.Fatalf("body is %d bytes, over %d", len(body), commentLimit)
	}
	if !strings.HasPrefix(body, "<!-- m -->\n") {
		t.Errorf("marker is not first")
	}
	for _, want := range []string{"| web | ❌ HealthCheckFailed |", "timeout waiting for 5000 object(s):\n", "…\n```\n", "**Truncated:** this report is longer than 65,536 bytes"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q", want)
		}
	}
	if n := strings.Count(body, "```"); n%2 != 0 {
		t.Errorf("a fenced block is left open (%d fences)", n)
	}
}

func TestMarkdownNeverExceedsMaxBytes(t *testing.T) {
	t.Parallel()
	results := []*result.Result{sample(false), awkward(), bigDiffs(3, 1), noChange("api")}
	full := Markdown(results, prOptions)
	for n := 1; n <= len(full)+10; n += 7 {
		opts := prOptions
		opts.MaxBytes = n
		body := Markdown(results, opts)
		if len(body) > n {
			t.Fatalf("MaxBytes %d: body is %d bytes", n, len(body))
		}
		if !utf8.ValidString(body) {
			t.Fatalf("MaxBytes %d: body is not valid UTF-8", n)
		}
	}
	opts := prOptions
	opts.MaxBytes = len(full)
	if got := Markdown(results, opts); got != full {
		t.Errorf("a body of exactly MaxBytes was changed")
	}
}

// The column shows the validation that ran, never "passed" when it was
// off or never reached.
func TestMarkdownValidationColumn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		validation result.Validation
		reason     result.Reason
		want       string
	}{
		{result.ValidationServer, result.ReasonApplySucceed, "✅ server dry-run"},
		{result.ValidationServer, result.ReasonHealthCheckFailed, "✅ server dry-run"},
		{result.ValidationClient, result.ReasonDiffSucceed, "✅ offline schema"},
		{result.ValidationClient, result.ReasonOfflineDiffSucceed, "✅ offline schema"},
		{result.ValidationServer, result.ReasonValidationFailed, "❌ server dry-run"},
		{result.ValidationClient, result.ReasonValidationFailed, "❌ offline schema"},
		{result.ValidationNone, result.ReasonApplySucceed, "off"},
		{result.ValidationNone, result.ReasonApplyFailed, "off"},
		{"", result.ReasonBuildFailed, "—"},
		{"", result.ReasonDependencyNotReady, "—"},
		{"", result.ReasonApplySucceed, "—"}, // nothing changed: nothing to validate
		{"", result.ReasonDeleteSucceed, "—"},
	} {
		if got := validation(&result.Result{Validation: tc.validation, Reason: tc.reason}); got != tc.want {
			t.Errorf("%q %s: validation %q, want %q", tc.validation, tc.reason, got, tc.want)
		}
	}
}

func TestMarkdownEscaping(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, got, want string
	}{
		{"cell pipe", cell("a|b"), `a\|b`},
		{"cell newline", cell("a\nb"), "a b"},
		{"inline emphasis", escapeInline("*a* _b_ <c> [d](e) ~f~ `g` \\"), `\*a\* \_b\_ \<c\> \[d\](e) \~f\~ \` + "`g\\`" + ` \\`},
		{"code span", codeSpan("a`b"), "``a`b``"},
		{"code span edge backtick", codeSpan("`a"), "`` `a ``"},
		{"fence plain", fenced("diff", "x").text(), "```diff\nx\n```\n\n"},
		{"fence longer than content", fenced("diff", "-```\n+````\n").text(), "`````diff\n-```\n+````\n`````\n\n"},
		{"link", link("run", "https://x/a (b)"), "[run](https://x/a%20%28b%29)"},
		{"marker kept", marker("<!-- m -->"), "<!-- m -->"},
		{"marker wrapped", marker("kustomize-deploy:unit=web"), "<!-- kustomize-deploy:unit=web -->"},
		{"thousands", thousands(1234567), "1,234,567"},
		{"thousands small", thousands(999), "999"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// Text from a repository or a report (a fork's title, file names,
// reasons, notes, diffs) mentions nobody, references no issue, links
// nowhere and holds no comment marker: a zero-width space breaks each up
// where GitHub would act on it, and code keeps them as they are but for
// the comment opener.
func TestMarkdownKeepsMentionsAndLinksInert(t *testing.T) {
	t.Parallel()
	r := &result.Result{Unit: "web", Mode: result.ModeDiff, Revision: "abc123", Ready: true, Reason: result.ReasonDiffSucceed,
		Notes: []string{"ping @octocat and @acme/security about #12, see https://evil.example and www.evil.example"},
		Entries: []result.Entry{{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "web"}, Stage: result.StageResources, Action: result.Configured,
			Source: "apps/@octocat.yaml", Diff: "+  note: <!-- kustomize-deploy:unit=api -->\n+  owner: @octocat\n"}}}
	r.Tally()
	opts := prOptions
	opts.Title = "kustomize-deploy: @acme/everyone https://evil.example"
	out := Markdown([]*result.Result{r}, opts)
	for _, live := range []string{"@octocat and", "@acme/security", "#12", "https://evil", "www.evil", "@acme/everyone", "apps/@octocat", "<!-- kustomize-deploy:unit=api -->"} {
		if strings.Contains(out, live) {
			t.Errorf("%q is live:\n%s", live, out)
		}
	}
	for _, inert := range []string{"@\u200boctocat and", "@\u200bacme/security", "#\u200b12", "https:\u200b//evil", "www\u200b.evil", "@\u200bacme/everyone",
		"<!-\u200b- kustomize-deploy:unit=api -->", "+  owner: @octocat"} {
		if !strings.Contains(out, inert) {
			t.Errorf("%q is not shown:\n%s", inert, out)
		}
	}
}
