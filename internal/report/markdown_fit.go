package report

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// fit joins the blocks into a body of at most opts.MaxBytes bytes: first
// diffs are replaced by their notes, largest first; if that is not enough
// the body is cut at a block boundary (a fenced block keeps its fences) and
// ends with a note.
func fit(bs []block, opts MarkdownOptions) string {
	dropped := make([]bool, len(bs))
	var all strings.Builder
	for _, b := range bs {
		all.WriteString(b.text())
	}
	// Diffs and their notes both end in a blank line, so trimming the end
	// changes every candidate's size alike.
	size := len(finish(all.String()))
	if opts.MaxBytes > 0 && size > opts.MaxBytes {
		var diffs []int
		for i, b := range bs {
			if b.note != "" {
				diffs = append(diffs, i)
			}
		}
		sort.SliceStable(diffs, func(a, b int) bool { return len(bs[diffs[a]].body) > len(bs[diffs[b]].body) })
		for _, i := range diffs {
			if size <= opts.MaxBytes {
				break
			}
			size -= len(bs[i].text()) - len(bs[i].note)
			dropped[i] = true
		}
	}
	text := func(i int) string {
		if dropped[i] {
			return bs[i].note
		}
		return bs[i].text()
	}

	var out strings.Builder
	if opts.MaxBytes <= 0 || size <= opts.MaxBytes {
		for i := range bs {
			out.WriteString(text(i))
		}
		return finish(out.String())
	}

	note := "\n**Truncated:** this report is longer than " + thousands(opts.MaxBytes) +
		" bytes; the rest is in " + jobSummary(opts.RunURL) + ".\n"
	budget := opts.MaxBytes - len(note)
	for i, b := range bs {
		t := text(i)
		if out.Len()+len(t) <= budget {
			out.WriteString(t)
			continue
		}
		// Keep the start of a long message inside its fences.
		const ellipsis = "…\n"
		room := budget - out.Len() - len(b.head) - len(b.tail) - len(ellipsis)
		if !dropped[i] && b.body != "" && room > 0 {
			out.WriteString(b.head + cutLines(b.body, room) + ellipsis + b.tail)
		}
		break
	}
	s := finish(out.String()) + note
	if len(s) > opts.MaxBytes { // MaxBytes smaller than the note itself
		s = cutBytes(s, opts.MaxBytes)
	}
	return s
}

// finish ends the body with exactly one newline.
func finish(s string) string { return strings.TrimRight(s, "\n") + "\n" }

// cutLines returns the longest prefix of s within n bytes, ending at a line
// break when there is one, else at a rune boundary.
func cutLines(s string, n int) string {
	s = cutBytes(s, n)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return s
}

// cutBytes returns the longest prefix of s within n bytes that does not
// split a UTF-8 sequence.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
