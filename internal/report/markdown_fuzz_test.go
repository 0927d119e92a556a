package report

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// FuzzMarkdown renders a unit whose name, reason, message, object names,
// sources, skip reasons and diff are anything (a diff holds a manifest's
// text, a message a server's), at any size limit; at odd limits as a
// three-way diff, the same texts as its change and drifted fields. What a PR comment must
// keep, it keeps: the marker first (the sticky comment is found by it);
// no more than MaxBytes; valid UTF-8 when the text was; every code fence
// closed; a table row per unit with exactly its columns; <details> blocks
// balanced; and no HTML, from any text, outside code but the renderer's
// own tags.
func FuzzMarkdown(f *testing.F) {
	a := awkward()
	s := sample(true)
	f.Add(s.Unit, string(s.Reason), s.Message, "web", "deploy/web/deployment.yaml", "", "--- a\n+++ b\n@@ -1 +1 @@\n-replicas: 1\n+replicas: 2\n", false, 0)
	f.Add(a.Unit, "Diff|Succeed", "dry-run of *abc*", a.Entries[0].Object.Name, a.Entries[0].Source, a.Entries[1].Reason, a.Entries[0].Diff, true, commentLimit)
	f.Add("web", "ApplyFailed", "ConfigMap/shop/x dry-run failed:\n```\n</details>\n| a | b |\n", "x</details>", "<script>.yaml", "`prune: disabled`", "+</details>\n+<details>\n+````\n", false, 300)
	f.Add("wéb", "BuildFailed", strings.Repeat("é", 200), "ü", "ö.yaml", "ß", strings.Repeat("+ä\n", 100), true, 257)
	f.Add("web", "ApplyFailed", "<!-- -->", "a\r\nb", "c\rd", "e\nf", "~~~\n<img src=x>\n", false, 1)
	f.Add("web", "DiffSucceed", "", "x\n\n# heading", "a\r\n\r\nb.yaml", "", "+a\n", true, 0)
	f.Add("@org/team", "DiffSucceed", "see https://evil.example and www.evil.example, @user #12", "x", "@admin.yaml", "cc @org/security #1", "+  note: <!-- kustomize-deploy:unit=api -->\n", false, 0)

	f.Fuzz(func(t *testing.T, unit, reason, message, name, source, skipReason, diff string, ready bool, maxBytes int) {
		if maxBytes < 0 || maxBytes > 1<<20 {
			return
		}
		r := &result.Result{Unit: unit, Mode: result.ModeDiff, Revision: "abc123", Ready: ready, Reason: result.Reason(reason), Message: message, Duration: "1s",
			Entries: []result.Entry{
				{Object: object.ID{Kind: "ConfigMap", Namespace: "shop", Name: name}, Stage: result.StageResources, Action: result.Configured, Source: source, Diff: diff},
				{Object: object.ID{Kind: "Secret", Namespace: "shop", Name: name}, Stage: result.StagePrune, Action: result.Skipped, Source: source, Reason: skipReason},
				{Object: object.ID{Kind: "Deployment", Namespace: "shop", Name: name}, Stage: result.StageResources, Action: result.Failed, Reason: skipReason},
			}}
		if maxBytes%2 == 1 { // a three-way diff: the same texts as drift and change
			r.Base = "def456"
			r.Entries[0].Change = diff
			r.Entries[0].Drift = []result.FieldDrift{{Field: skipReason, Live: name, Applied: source, Merged: message, Reverted: ready}}
			r.Entries[2].Gone = true
		}
		r.Tally()
		other := noChange("other")
		const m = "<!-- kustomize-deploy:unit=web -->"
		opts := MarkdownOptions{Title: "kustomize-deploy " + unit, Marker: m, RunURL: "https://github.com/o/r/actions/runs/42", MaxBytes: maxBytes}
		out := Markdown([]*result.Result{r, other}, opts)

		if maxBytes > 0 && len(out) > maxBytes {
			t.Fatalf("%d bytes, limit %d", len(out), maxBytes)
		}
		// Each input on its own: two invalid pieces can join into a valid
		// sequence ("\xd3" + "\x84").
		valid := true
		for _, in := range []string{unit, reason, message, name, source, skipReason, diff} {
			valid = valid && utf8.ValidString(in)
		}
		if valid && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8:\n%q", out)
		}
		if maxBytes == 0 || maxBytes >= 1024 {
			if !strings.HasPrefix(out, m+"\n") {
				t.Fatalf("the marker is not first:\n%s", out)
			}
		}
		checkStructure(t, out, 2, maxBytes > 0 && maxBytes < 512)

		// Pages: each within the limit and well-formed on its own; the
		// table on the first.
		opts.MaxPages = 3
		for n, page := range MarkdownPages([]*result.Result{r, other}, opts) {
			if maxBytes > 0 && len(page) > maxBytes {
				t.Fatalf("page %d: %d bytes, limit %d", n+1, len(page), maxBytes)
			}
			units := 2
			if n > 0 {
				units = -1
			}
			checkStructure(t, page, units, maxBytes > 0 && maxBytes < 512)
		}
	})
}

// ownTags are the HTML the renderer writes itself.
var ownTags = regexp.MustCompile(`^<!-- kustomize-deploy:unit=web( page=\d+)? -->$|<details( open)?><summary>|</summary>|</details>|</?code>|</?b>|<a href="https://github.com/o/r/actions/runs/42">|</a>`)

// liveText is what GitHub turns into a mention, a reference or a link in
// text; ownLinks, the links the renderer writes itself.
var (
	liveText = regexp.MustCompile(`@[A-Za-z0-9]|#[0-9]|(?i:https?://|www\.)`)
	ownLinks = regexp.MustCompile(`<a href="https://github.com/o/r/actions/runs/42">|\]\(https://github.com/o/r/actions/runs/42\)`)
)

// lineBreak is a line ending as CommonMark (and so GitHub) reads one.
var lineBreak = regexp.MustCompile(`\r\n|\r|\n`)

// checkStructure parses out as GitHub would, line by line: fenced code
// blocks (CommonMark: a closing fence is at least as long as the opening
// one), the summary table and <details> blocks. A body cut below the size
// of the truncation note (tiny) may end anywhere.
func checkStructure(t *testing.T, out string, units int, tiny bool) {
	t.Helper()
	fence, rows, open := "", 0, 0
	for i, line := range lineBreak.Split(strings.TrimSuffix(out, "\n"), -1) {
		// Only the marker, first, opens an HTML comment: a sticky comment
		// is found by it, and a manifest may quote another unit's.
		if i > 0 && strings.Contains(line, "<!--") {
			t.Fatalf("an HTML comment opener from the input at %q:\n%s", line, out)
		}
		if fence != "" {
			if strings.HasPrefix(line, fence) && strings.Trim(line, "`") == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(line, "```") {
			fence = line[:len(line)-len(strings.TrimLeft(line, "`"))]
			continue
		}
		if strings.HasPrefix(line, "| ") {
			rows++
			if n := unescaped(line, '|'); n != 10 {
				t.Fatalf("table row with %d column separators, want 10: %q", n-1, line)
			}
		}
		// A line break in the summary would end the HTML block (at a
		// blank line) with the rest rendered as markdown.
		if strings.Contains(line, "<summary>") && !strings.HasSuffix(line, "</summary>") {
			t.Fatalf("<summary> broken across lines at %q:\n%s", line, out)
		}
		open += strings.Count(line, "<details>") + strings.Count(line, "<details open>") - strings.Count(line, "</details>")
		if open < 0 || open > 1 {
			t.Fatalf("<details> unbalanced at %q:\n%s", line, out)
		}
		if rest := ownTags.ReplaceAllString(withoutCodeSpans(line), ""); unescaped(rest, '<') > 0 {
			t.Fatalf("raw HTML from the input: %q\n%s", line, out)
		}
		if live := liveText.FindString(ownLinks.ReplaceAllString(withoutCodeSpans(line), "")); live != "" {
			t.Fatalf("%q would mention, reference or link: %q\n%s", live, line, out)
		}
	}
	if fence != "" && !tiny {
		t.Fatalf("code fence %s left open:\n%s", fence, out)
	}
	if open != 0 && !tiny {
		t.Fatalf("<details> left open:\n%s", out)
	}
	if rows != units+1 && !tiny && !strings.Contains(out, "**Truncated:**") {
		t.Fatalf("%d table rows, want %d (header and one per unit):\n%s", rows, units+1, out)
	}
}

// withoutCodeSpans removes line's inline code spans (whose content is
// literal), leaving backslash-escaped backticks alone.
func withoutCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		switch {
		case line[i] == '\\' && i+1 < len(line):
			b.WriteString(line[i : i+2])
			i += 2
		case line[i] == '`':
			n := len(line[i:]) - len(strings.TrimLeft(line[i:], "`"))
			run := line[i : i+n]
			end := closingRun(line[i+n:], n)
			if end < 0 {
				b.WriteString(run)
				i += n
				continue
			}
			i += n + end + n
		default:
			b.WriteByte(line[i])
			i++
		}
	}
	return b.String()
}

// closingRun is the index in s of the first run of exactly n backticks,
// or -1.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

// unescaped counts c in s not preceded by a backslash that is itself not
// escaped.
func unescaped(s string, c byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case c:
			n++
		}
	}
	return n
}
