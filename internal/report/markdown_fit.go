package report

import (
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"

	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// omittedCap bounds the folded list of diffs left out; the rest is
// counted ("and 812 more").
const omittedCap = 4000

// omittedReserve is room kept for the folded list once a diff is left out.
const omittedReserve = omittedCap + 300

// dropOrder is the order in which diffs are left out when they do not
// fit: the others' largest first, then the risky ones' largest first.
func dropOrder(bs []block) []int {
	var order []int
	for i, b := range bs {
		if b.droppable() {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(a, b int) bool {
		x, y := bs[order[a]], bs[order[b]]
		if x.risky != y.risky {
			return !x.risky
		}
		if len(x.body) != len(y.body) {
			return len(x.body) > len(y.body)
		}
		return order[a] > order[b] // of equals, the later ones go first
	})
	return order
}

// shown is block i's text as the document shows it: the note of a risky
// diff left out, nothing for another diff left out (it is in the folded
// list).
func shown(bs []block, dropped []bool, i int) string {
	if !dropped[i] {
		return bs[i].text()
	}
	return bs[i].note
}

// omittedList folds the diffs left out into one list, those of the same
// action, kind and namespace in one line ("412 × configured `ConfigMap`
// in `shop` (1,234 characters): `a`, `b`, `c` and 409 more"); "" when
// none is left out.
func omittedList(bs []block, dropped []bool, runURL string) string {
	type group struct {
		key, line string
		names     []string
		size      int
	}
	var groups []*group
	at := map[string]*group{}
	count := 0
	for i, b := range bs {
		if !dropped[i] || b.omitted == "" {
			continue
		}
		count++
		if b.group == "" {
			groups = append(groups, &group{line: b.omitted})
			continue
		}
		g, ok := at[b.group]
		if !ok {
			g = &group{key: b.group, line: b.omitted}
			at[b.group] = g
			groups = append(groups, g)
		}
		g.names, g.size = append(g.names, b.name), g.size+b.size
	}
	if count == 0 {
		return ""
	}
	var lines []string
	for _, g := range groups {
		if len(g.names) < 2 {
			lines = append(lines, g.line)
			continue
		}
		lines = append(lines, fmt.Sprintf("- %s × %s (%s characters): %s\n", thousands(len(g.names)), g.key, thousands(g.size), object.Few(g.names)))
	}
	var body strings.Builder
	for i, l := range lines {
		if body.Len()+len(l) > omittedCap {
			fmt.Fprintf(&body, "- and %s more\n", thousands(len(lines)-i))
			break
		}
		body.WriteString(l)
	}
	noun := "diffs"
	if count == 1 {
		noun = "diff"
	}
	return fmt.Sprintf("<details><summary>%s %s not shown here (too large): see %s</summary>\n\n%s\n</details>\n\n",
		thousands(count), noun, htmlLink("the job summary", runURL), body.String())
}

// fit joins the blocks into a body of at most opts.MaxBytes bytes: first
// diffs are left out (see dropOrder); if that is not enough the body is
// cut at a block boundary (a fenced block keeps its fences) and ends with
// a note.
func fit(bs []block, opts MarkdownOptions) string {
	dropped := make([]bool, len(bs))
	var whole strings.Builder
	for _, b := range bs {
		whole.WriteString(b.text())
	}
	// Diffs and notes all end in a blank line, so trimming the end
	// changes every candidate's size alike.
	size := len(finish(whole.String()))
	if opts.MaxBytes > 0 && size > opts.MaxBytes {
		reserved := false
		for _, i := range dropOrder(bs) {
			if size <= opts.MaxBytes {
				break
			}
			dropped[i] = true
			size -= len(bs[i].text()) - len(bs[i].note)
			if bs[i].omitted != "" && !reserved {
				size += omittedReserve
				reserved = true
			}
		}
	}
	texts := make([]string, 0, len(bs)+1)
	for i := range bs {
		texts = append(texts, shown(bs, dropped, i))
	}
	var all strings.Builder
	for _, t := range texts {
		all.WriteString(t)
	}
	omitted := omittedList(bs, dropped, opts.RunURL)
	body := finish(all.String() + omitted)
	if opts.MaxBytes <= 0 || len(body) <= opts.MaxBytes {
		return body
	}

	note := "\n**Truncated:** this report is longer than " + thousands(opts.MaxBytes) +
		" bytes; the rest is in " + jobSummary(opts.RunURL) + ".\n"
	budget := opts.MaxBytes - len(note)
	var out strings.Builder
	for i, b := range bs {
		t := texts[i]
		if out.Len()+len(t) <= budget {
			out.WriteString(t)
			continue
		}
		// Keep the start of a long message inside its fences.
		if !dropped[i] {
			out.WriteString(cutBlock(b, budget-out.Len()))
		}
		break
	}
	s := finish(out.String()) + note
	if len(s) > opts.MaxBytes { // MaxBytes smaller than the note itself
		s = cutBytes(s, opts.MaxBytes)
	}
	return s
}

// cutBlock is as much of b as fits in n bytes, its fences kept and its
// body cut at a line, ending "…"; "" when even that does not fit.
func cutBlock(b block, n int) string {
	const ellipsis = "…\n"
	room := n - len(b.head) - len(b.tail) - len(ellipsis)
	if b.body == "" || room <= 0 {
		return ""
	}
	return b.head + cutLines(b.body, room) + ellipsis + b.tail
}

// MarkdownPages renders results as Markdown does, in as many bodies of at
// most opts.MaxBytes as it takes, up to opts.MaxPages: the PR comment
// over GitHub's limit becomes numbered comments. Page 1 starts with
// opts.Marker, page n with opts.PageMarker(n), and every page but the last
// ends saying it continues. Beyond MaxPages diffs are left out as in
// Markdown, the risky ones last (their items stay, as a line); if the
// rest still needs more pages (thousands of risky items, a forged
// report), the last page ends where MaxPages do, saying the rest is in
// the job summary: never more than MaxPages. A block too large for any
// page is cut, its fences kept.
func MarkdownPages(results []*result.Result, opts MarkdownOptions) []string {
	bs := markdownBlocks(results, opts)
	maxPages := max(opts.MaxPages, 1)
	if opts.MaxBytes <= 0 || maxPages == 1 {
		return []string{fit(bs, opts)}
	}
	pageMarker := opts.PageMarker
	if pageMarker == nil {
		pageMarker = func(n int) string {
			return strings.TrimSuffix(marker(opts.Marker), " -->") + fmt.Sprintf(" page=%d -->", n)
		}
	}
	header := func(n, total int) string {
		h := pageMarker(n) + "\n"
		if opts.Title != "" {
			return h + fmt.Sprintf("## %s (continued, %d/%d)\n\n", escapeInline(opts.Title), n, total)
		}
		return h + fmt.Sprintf("**Continued, %d/%d**\n\n", n, total)
	}
	footer := func(n, total int) string {
		return fmt.Sprintf("\n*Continued in the next comment (%d/%d).*\n", n+1, total)
	}
	reserve := max(len(header(99, 99)), len(marker(opts.Marker))+1) + len(footer(98, 99))
	budget := opts.MaxBytes - reserve
	if budget < 1000 {
		return []string{fit(bs, opts)}
	}

	dropped := make([]bool, len(bs))
	for i, b := range bs {
		if b.droppable() && len(b.text()) > budget {
			dropped[i] = true
		}
	}
	for _, i := range dropOrder(bs) {
		if len(paginate(bs, dropped, budget, opts.RunURL, 0)) <= maxPages {
			break
		}
		dropped[i] = true
	}
	pages := paginate(bs, dropped, budget, opts.RunURL, 0)
	if len(pages) > maxPages {
		note := fmt.Sprintf("\n**Truncated:** this report takes more than %d comments; the rest is in %s.\n", maxPages, jobSummary(opts.RunURL))
		pages = paginate(bs, dropped, budget-len(note), opts.RunURL, maxPages)
		pages[len(pages)-1] = finish(pages[len(pages)-1]) + note
	}
	out := make([]string, len(pages))
	for n, p := range pages {
		if n > 0 {
			p = header(n+1, len(pages)) + p
		}
		p = finish(p)
		if n < len(pages)-1 {
			p += footer(n+1, len(pages))
		}
		out[n] = p
	}
	return out
}

// paginate lays the blocks out, as shown, on pages of at most budget
// bytes, the folded list of what was left out at the end. With maxPages
// (0: no limit), it stops at the first block that does not fit on the
// last page.
func paginate(bs []block, dropped []bool, budget int, runURL string, maxPages int) []string {
	var pages []string
	var cur strings.Builder
	stopped := false
	put := func(t string, b block, hasBlock bool) {
		if t == "" || stopped {
			return
		}
		if cur.Len()+len(t) > budget && cur.Len() > 0 {
			if maxPages > 0 && len(pages)+1 >= maxPages {
				stopped = true
				return
			}
			pages = append(pages, cur.String())
			cur.Reset()
		}
		if len(t) > budget {
			if hasBlock {
				t = cutBlock(b, budget)
			}
			if t == "" || len(t) > budget {
				t = cutLines(t, budget)
			}
		}
		cur.WriteString(t)
	}
	for i, b := range bs {
		put(shown(bs, dropped, i), b, !dropped[i])
	}
	put(omittedList(bs, dropped, runURL), block{}, false)
	if cur.Len() > 0 || len(pages) == 0 {
		pages = append(pages, cur.String())
	}
	return pages
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
