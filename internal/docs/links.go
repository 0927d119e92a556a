package docs

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Problem is a link that leads nowhere.
type Problem struct {
	File   string // relative to the repository root, with '/'
	Line   int
	Target string
	Why    string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Target, p.Why)
}

// CheckLinks checks every relative link and image of the markdown files
// (paths relative to root): the file or directory it names exists inside
// root, and its #fragment, in the same file or in another markdown file,
// is the anchor of a heading there (GitHub's slugs, see Slug). Absolute
// URLs (http:, mailto:, ...) are not followed.
func CheckLinks(root string, files []string) ([]Problem, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	anchors := map[string]map[string]bool{} // by absolute path
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := map[string]bool{}
		for _, s := range Anchors(string(data)) {
			a[s] = true
		}
		anchors[path] = a
		return a, nil
	}
	var problems []Problem
	for _, file := range files {
		path := filepath.Join(root, filepath.FromSlash(file))
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for _, l := range Links(string(data)) {
			if why := checkLink(root, path, l.Target, anchorsOf); why != "" {
				problems = append(problems, Problem{File: filepath.ToSlash(file), Line: l.Line, Target: l.Target, Why: why})
			}
		}
	}
	return problems, nil
}

// scheme starts an absolute URL: http:, https:, mailto:, ...
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// lineFragment is GitHub's anchor of a line, or lines, of a file it shows
// as code (action.yml#L76, main.go#L10-L20).
var lineFragment = regexp.MustCompile(`^L[0-9]+(-L[0-9]+)?$`)

// checkLink says why target, linked from the file at path, leads nowhere,
// or "" when it leads somewhere.
func checkLink(root, from, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	ref, fragment, _ := strings.Cut(target, "#")
	ref, _, _ = strings.Cut(ref, "?")
	if strings.HasPrefix(ref, "/") {
		return "a path from the site's root leaves the repository on GitHub; link relative to this file"
	}
	ref, err := url.PathUnescape(ref)
	if err != nil {
		return "not a valid URL path: " + err.Error()
	}
	dest := from
	if ref != "" {
		dest = filepath.Join(filepath.Dir(from), filepath.FromSlash(ref))
		if rel, err := filepath.Rel(root, dest); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "outside the repository"
		}
	}
	info, err := os.Stat(dest)
	if err != nil {
		return "no such file or directory"
	}
	if fragment == "" {
		return ""
	}
	if fragment, err = url.PathUnescape(fragment); err != nil {
		return "not a valid fragment: " + err.Error()
	}
	if info.IsDir() || !strings.EqualFold(filepath.Ext(dest), ".md") {
		if !info.IsDir() && lineFragment.MatchString(fragment) {
			return ""
		}
		return "a #fragment of something that is not a markdown file"
	}
	a, err := anchorsOf(dest)
	if err != nil {
		return err.Error()
	}
	if !a[fragment] {
		return fmt.Sprintf("no heading with the anchor #%s in %s", fragment, filepath.Base(dest))
	}
	return ""
}

// Link is one link or image target of a markdown file.
type Link struct {
	Line   int
	Target string
}

var (
	// [text](target "title") and ![alt](target): the text may hold one
	// level of brackets, the target one level of parentheses.
	inlineLink = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?\s*\)`)
	// [label]: target, a link reference definition.
	referenceDefinition = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^<>\n]*>|\S+)`)
	// <a href="..."> and <img src="...">.
	htmlLink = regexp.MustCompile(`(?i)<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*"([^"]*)"`)
)

// Links lists the link and image targets of a markdown document, outside
// fenced code blocks and code spans, with their line numbers.
func Links(doc string) []Link {
	text := maskCode(doc)
	type found struct {
		at     int
		target string
	}
	var all []found
	for _, re := range []*regexp.Regexp{inlineLink, referenceDefinition, htmlLink} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			if target := strings.TrimSuffix(strings.TrimPrefix(text[m[2]:m[3]], "<"), ">"); target != "" {
				all = append(all, found{m[2], target})
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at < all[j].at })
	links := make([]Link, 0, len(all))
	for _, f := range all {
		links = append(links, Link{Line: 1 + strings.Count(text[:f.at], "\n"), Target: f.target})
	}
	return links
}

// maskCode blanks fenced code blocks and code spans (keeping line breaks,
// so offsets still give line numbers): a link inside them is only text.
func maskCode(doc string) string {
	lines := strings.SplitAfter(doc, "\n")
	fenced := fencedLines(lines)
	for i, l := range lines {
		if fenced[i] {
			lines[i] = blank(l)
		}
	}
	text := []byte(strings.Join(lines, ""))
	for i := 0; i < len(text); {
		if text[i] != '`' {
			i++
			continue
		}
		n := run(text, i)
		closing := -1
		for j := i + n; j < len(text); {
			if text[j] != '`' {
				j++
				continue
			}
			if m := run(text, j); m == n {
				closing = j
				break
			} else {
				j += m
			}
		}
		if closing < 0 { // no closing run: literal backticks
			i += n
			continue
		}
		copy(text[i:closing+n], blank(string(text[i:closing+n])))
		i = closing + n
	}
	return string(text)
}

// run is the length of the run of backticks at text[i].
func run(text []byte, i int) int {
	n := 0
	for i+n < len(text) && text[i+n] == '`' {
		n++
	}
	return n
}

// blank is s with everything but line breaks turned into spaces.
func blank(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		return ' '
	}, s)
}

// fence opens or closes a fenced code block: ``` or ~~~ (or longer).
var fence = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")

// fencedLines marks the lines of lines that belong to fenced code blocks,
// the fences included.
func fencedLines(lines []string) []bool {
	in := make([]bool, len(lines))
	open := ""
	for i, l := range lines {
		m := fence.FindStringSubmatch(l)
		switch {
		case open == "" && m != nil:
			open = m[1]
			in[i] = true
		case open != "":
			in[i] = true
			if m != nil && m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(l[len(m[0]):]) == "" {
				open = ""
			}
		}
	}
	return in
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	htmlAnchor = regexp.MustCompile(`(?i)<a\b[^>]*?\b(?:name|id)\s*=\s*"([^"]*)"`)
)

// Anchors lists the #fragments a markdown document answers to on GitHub:
// the slug of each ATX heading outside code blocks, in order, a repeated
// slug numbered -1, -2, ... as GitHub does, and the name or id of each
// <a> element.
func Anchors(doc string) []string {
	lines := strings.SplitAfter(doc, "\n")
	fenced := fencedLines(lines)
	seen := map[string]int{}
	var anchors []string
	for i, l := range lines {
		if fenced[i] {
			continue
		}
		if m := atxHeading.FindStringSubmatch(strings.TrimRight(l, "\r\n")); m != nil {
			anchors = append(anchors, unique(seen, Slug(m[1])))
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			anchors = append(anchors, m[1])
		}
	}
	return anchors
}

// unique is slug, or the first of slug-1, slug-2, ... not seen before (the
// rule of github-slugger, which GitHub uses).
func unique(seen map[string]int, slug string) string {
	s := slug
	for {
		if _, ok := seen[s]; !ok {
			break
		}
		seen[slug]++
		s = fmt.Sprintf("%s-%d", slug, seen[slug])
	}
	seen[s] = 0
	return s
}

var (
	headingLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag     = regexp.MustCompile(`<[^>]*>`)
)

// Slug is the anchor GitHub gives a heading, from its markdown text: the
// text as shown (links become their text, markup and HTML tags go), lower
// case, every character but letters, digits, '-', '_' and spaces dropped,
// each space a '-'. Repeated headings are numbered by Anchors.
func Slug(heading string) string {
	text := headingLink.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
