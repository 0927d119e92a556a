package report

import (
	"html"
	"strings"
)

// zwsp, a zero-width space, breaks up what GitHub would act on in text
// taken from a repository or a report, invisibly: a mention (@user,
// @org/team) that would notify, a reference (#12) that would link another
// issue, a bare URL or www. address that would become a link, and a
// comment marker (<!--) that could pass for the one a sticky comment is
// found by.
const zwsp = "\u200b"

// inert are the replacements that keep mentions, references and bare
// links inert in text GitHub renders (not in code, where they are inert).
var inert = []string{
	"@", "@" + zwsp, "://", ":" + zwsp + "//", "www.", "www" + zwsp + ".",
	"#0", "#" + zwsp + "0", "#1", "#" + zwsp + "1", "#2", "#" + zwsp + "2", "#3", "#" + zwsp + "3", "#4", "#" + zwsp + "4",
	"#5", "#" + zwsp + "5", "#6", "#" + zwsp + "6", "#7", "#" + zwsp + "7", "#8", "#" + zwsp + "8", "#9", "#" + zwsp + "9",
}

// inlineEscaper backslash-escapes the characters that would turn plain text
// into emphasis, code, links, HTML, strikethrough or a table column, and
// keeps mentions, references and bare links inert.
var inlineEscaper = strings.NewReplacer(append([]string{
	"\\", `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "|", `\|`, "~", `\~`, "&", `\&`,
	"\r\n", " ", "\n", " ", "\r", " ",
}, inert...)...)

// escapeInline makes s render literally on one line of markdown, with
// nothing in it that GitHub would turn into a mention or a link.
func escapeInline(s string) string { return inlineEscaper.Replace(s) }

// inertEscaper keeps mentions, references and bare links inert in text
// of an HTML block; html.EscapeString comes after (its entities hold #).
var inertEscaper = strings.NewReplacer(inert...)

// commentEscaper breaks every HTML comment opener in code: a diff or a
// message may hold another unit's comment marker.
var commentEscaper = strings.NewReplacer("<!--", "<!-"+zwsp+"-")

// cell makes s one literal table cell.
func cell(s string) string { return escapeInline(s) }

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			longest = max(longest, n)
		} else {
			n = 0
		}
	}
	return longest
}

// lineBreaks turns every line ending CommonMark knows into a space.
var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// htmlLine makes s literal text on one line of HTML, with nothing in it
// that GitHub would turn into a mention or a link.
func htmlLine(s string) string {
	return html.EscapeString(inertEscaper.Replace(lineBreaks.Replace(s)))
}

// codeSpan wraps s in enough backticks that none inside ends it.
func codeSpan(s string) string {
	s = commentEscaper.Replace(lineBreaks.Replace(s))
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// fenced is a fenced code block whose fence is longer than any backtick run
// in content, so a diff of a manifest holding ``` cannot close it early.
func fenced(info, content string) block {
	content = commentEscaper.Replace(content)
	fence := strings.Repeat("`", max(3, longestRun(content, '`')+1))
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	return block{head: fence + info + "\n", body: content, tail: fence + "\n\n"}
}

// link is a markdown link; the characters that would end the destination
// early are percent-encoded.
func link(text, url string) string {
	url = strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E").Replace(url)
	return "[" + escapeInline(text) + "](" + url + ")"
}

// htmlLink is link for inside an HTML block (a <summary>), where markdown
// is not rendered: an <a> element, or the plain text without a URL.
func htmlLink(text, url string) string {
	if url == "" {
		return html.EscapeString(text)
	}
	return `<a href="` + html.EscapeString(url) + `">` + html.EscapeString(text) + "</a>"
}
