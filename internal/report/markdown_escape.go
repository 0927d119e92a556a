package report

import (
	"html"
	"strings"
)

// inlineEscaper backslash-escapes the characters that would turn plain text
// into emphasis, code, links, HTML, strikethrough or a table column.
var inlineEscaper = strings.NewReplacer(
	"\\", `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "|", `\|`, "~", `\~`, "&", `\&`,
	"\r\n", " ", "\n", " ", "\r", " ",
)

// escapeInline makes s render literally on one line of markdown.
func escapeInline(s string) string { return inlineEscaper.Replace(s) }

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

// htmlLine makes s literal text on one line of HTML.
func htmlLine(s string) string { return html.EscapeString(lineBreaks.Replace(s)) }

// codeSpan wraps s in enough backticks that none inside ends it.
func codeSpan(s string) string {
	s = lineBreaks.Replace(s)
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// fenced is a fenced code block whose fence is longer than any backtick run
// in content, so a diff of a manifest holding ``` cannot close it early.
func fenced(info, content string) block {
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
