// Package leaktest finds secret values in what a run printed, wrote or
// sent, in every form a value takes on its way out: as it is, base64
// (standard and URL alphabets, padded or not), URL-escaped (query and
// path), JSON-escaped (with and without HTML escaping), Go-quoted and
// YAML single-quoted; each of those, and the value, escaped once more as
// markdown, HTML or JSON (a message quoting the value, rendered in a
// comment or sent or printed as JSON); a multi-line value line by line. The forms are computed
// here, apart from internal/mask, so that a form the masker forgets is a
// hit and not a blind spot shared by both.
//
// Lines that start with the ::add-mask:: workflow command carry values to
// the runner by design and are not scanned.
package leaktest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// MaskCommand starts the lines that register a value with the runner.
const MaskCommand = "::add-mask::"

// minLine is the shortest line of a multi-line value that is looked for
// alone; shorter lines ("-----", "}") are everywhere.
const minLine = 8

// Secret is a value that must never be seen.
type Secret struct {
	// Name says what the value is ("SOPS stringData"), for reports.
	Name  string
	Value string
	// Unmasked marks a value the run cannot know, so need not register
	// with ::add-mask:: (a value edited into the cluster by hand), or one
	// that is not secret by itself (a client certificate), scanned all the
	// same.
	Unmasked bool
}

// Form is a secret value as it may be written.
type Form struct {
	Encoding string
	Text     string
}

// Forms are the forms of value looked for, each once (the first encoding
// that gives a text names it).
func Forms(value string) []Form {
	var out []Form
	seen := map[string]bool{}
	add := func(encoding, text string) {
		// Captures are scanned line by line.
		if text == "" || strings.Contains(text, "\n") || seen[text] {
			return
		}
		seen[text] = true
		out = append(out, Form{encoding, text})
	}
	escapes := func(prefix, v string) {
		once := []Form{
			{"raw", v},
			{"url-query", url.QueryEscape(v)},
			{"url-path", url.PathEscape(v)},
			{"json", jsonInner(v, true)},
			{"json-no-html", jsonInner(v, false)},
			{"go-quoted", goInner(strconv.Quote(v))},
			{"go-quoted-ascii", goInner(strconv.QuoteToASCII(v))},
			{"yaml-single-quoted", strings.ReplaceAll(v, "'", "''")},
		}
		for _, f := range once[1:] {
			add(prefix+f.Encoding, f.Text)
		}
		// A message quoting the value, rendered as markdown or HTML (a
		// PR comment, the job summary), or sent or printed as JSON (a
		// request body, --output json, a step output).
		for _, f := range once {
			name := prefix + f.Encoding + " in "
			if f.Encoding == "raw" {
				name = prefix
			}
			add(name+"markdown", markdownEscaper.Replace(f.Text))
			add(name+"html", html.EscapeString(f.Text))
			add(name+"json", jsonInner(f.Text, true))
			add(name+"json-no-html", jsonInner(f.Text, false))
		}
	}
	if strings.Contains(value, "\n") {
		for _, l := range strings.Split(value, "\n") {
			if l = strings.TrimSpace(l); len(l) >= minLine {
				add("line", l)
				escapes("line-", l)
			}
		}
	} else {
		add("raw", value)
	}
	escapes("", value)
	b := []byte(value)
	add("base64", base64.StdEncoding.EncodeToString(b))
	add("base64-raw", base64.RawStdEncoding.EncodeToString(b))
	add("base64-url", base64.URLEncoding.EncodeToString(b))
	add("base64-url-raw", base64.RawURLEncoding.EncodeToString(b))
	return out
}

// markdownEscaper backslash-escapes what markdown would read as syntax,
// as renderers of plain text into markdown do.
var markdownEscaper = strings.NewReplacer(
	"\\", `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "|", `\|`, "~", `\~`, "&", `\&`, "#", `\#`,
)

func jsonInner(v string, html bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(v) // a string always encodes
	s := strings.TrimSuffix(buf.String(), "\n")
	return s[1 : len(s)-1]
}

func goInner(quoted string) string { return quoted[1 : len(quoted)-1] }

// Hit is a form of a secret found where it must not be.
type Hit struct {
	Secret, Mode, Stream, Encoding string
	// Line is the 1-based line of the stream of the first occurrence;
	// Count how many there are.
	Line, Count int
	// Context is the text around the first occurrence, every secret form
	// in it replaced by <SECRET>.
	Context string
}

func (h Hit) String() string {
	return fmt.Sprintf("%s leaks in %s, %s line %d, as %s (%d times): …%s…", h.Secret, h.Mode, h.Stream, h.Line, h.Encoding, h.Count, h.Context)
}

// capture is one stream of one run.
type capture struct{ mode, stream, text string }

// Scanner collects secrets and what runs produced, then scans the lot.
// It is safe for concurrent use.
type Scanner struct {
	mu       sync.Mutex
	secrets  []Secret
	captures []capture
}

// Secret adds a value to look for.
func (s *Scanner) Secret(name, value string) { s.add(Secret{Name: name, Value: value}) }

// Unmasked adds a value to look for that no run registers (see
// Secret.Unmasked).
func (s *Scanner) Unmasked(name, value string) {
	s.add(Secret{Name: name, Value: value, Unmasked: true})
}

func (s *Scanner) add(sec Secret) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets = append(s.secrets, sec)
}

// Secrets are the values added so far.
func (s *Scanner) Secrets() []Secret {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Secret(nil), s.secrets...)
}

// Capture adds text that the run in mode produced on stream (stdout,
// the job summary, a request to GitHub...).
func (s *Scanner) Capture(mode, stream, text string) {
	// Comments and summaries break mentions, links and comment markers
	// with a zero-width space: one in a secret still leaks it.
	text = strings.ReplaceAll(text, "\u200b", "")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.captures = append(s.captures, capture{mode, stream, text})
}

// CaptureJSON adds a JSON document that the run in mode sent on stream
// (a notification's payload): as sent, and each string in it as its
// receiver reads it, decoded, at any depth (a message inside an event
// inside a repository_dispatch payload). A body that is not JSON is
// captured as it is.
func (s *Scanner) CaptureJSON(mode, stream string, body []byte) {
	s.Capture(mode, stream, string(body))
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			s.Capture(mode, stream+", decoded", v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				s.Capture(mode, stream+", decoded", k)
				walk(e)
			}
		}
	}
	walk(doc)
}

// Counts are what a scan covered.
type Counts struct {
	Secrets, Forms, Modes, Streams, Captures, Bytes int
}

func (c Counts) String() string {
	return fmt.Sprintf("%d secrets in %d forms, through %d captures (%d modes, %d kinds of stream, %d bytes)",
		c.Secrets, c.Forms, c.Captures, c.Modes, c.Streams, c.Bytes)
}

// Hits scans every capture for every form of every secret.
func (s *Scanner) Hits() ([]Hit, Counts) {
	s.mu.Lock()
	defer s.mu.Unlock()
	type named struct {
		Form
		secret string
	}
	var forms []named
	for _, sec := range s.secrets {
		for _, f := range Forms(sec.Value) {
			forms = append(forms, named{f, sec.Name})
		}
	}
	// Longest first: the context masks the longest form at a place.
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i].Text) > len(forms[j].Text) })
	c := Counts{Secrets: len(s.secrets), Forms: len(forms), Captures: len(s.captures)}
	modes, streams := map[string]bool{}, map[string]bool{}
	found := map[[4]string]*Hit{}
	var order [][4]string
	for _, cp := range s.captures {
		modes[cp.mode], streams[cp.stream] = true, true
		c.Bytes += len(cp.text)
		for n, line := range strings.Split(cp.text, "\n") {
			if strings.HasPrefix(line, MaskCommand) {
				continue
			}
			var spans [][2]int // every occurrence of every form in the line
			type at struct {
				named
				pos int
			}
			var hits []at
			for _, f := range forms {
				for from := 0; ; {
					i := strings.Index(line[from:], f.Text)
					if i < 0 {
						break
					}
					i += from
					spans = append(spans, [2]int{i, i + len(f.Text)})
					hits = append(hits, at{f, i})
					from = i + 1
				}
			}
			for _, h := range hits {
				key := [4]string{h.secret, cp.mode, cp.stream, h.Encoding}
				if hit := found[key]; hit != nil {
					hit.Count++
					continue
				}
				found[key] = &Hit{Secret: h.secret, Mode: cp.mode, Stream: cp.stream, Encoding: h.Encoding,
					Line: n + 1, Count: 1, Context: context(line, h.pos, h.pos+len(h.Text), spans)}
				order = append(order, key)
			}
		}
	}
	c.Modes, c.Streams = len(modes), len(streams)
	out := make([]Hit, len(order))
	for i, k := range order {
		out[i] = *found[k]
	}
	return out, c
}

// contextChars are shown on each side of a hit.
const contextChars = 24

// context is line around [start, end) with every span that reaches into
// it replaced by <SECRET>, so that a report never shows a value.
func context(line string, start, end int, spans [][2]int) string {
	from, to := max(0, start-contextChars), min(len(line), end+contextChars)
	var b strings.Builder
	for i := from; i < to; {
		j := -1
		for _, sp := range spans {
			if sp[0] <= i && i < sp[1] && sp[1] > j {
				j = sp[1]
			}
		}
		if j >= 0 {
			b.WriteString("<SECRET>")
			i = j
			continue
		}
		b.WriteByte(line[i])
		i++
	}
	return strings.ToValidUTF8(b.String(), "?")
}

// Check fails t for every hit, and logs what was scanned.
func (s *Scanner) Check(t testing.TB) {
	t.Helper()
	hits, c := s.Hits()
	for _, h := range hits {
		t.Errorf("%s", h)
	}
	t.Logf("leak scan: %s: %d hits", c, len(hits))
	if c.Secrets == 0 || c.Captures == 0 {
		t.Error("leak scan: nothing to scan")
	}
}

// Registered are the values stdout registered with ::add-mask::, the
// workflow command's escapes undone.
func Registered(stdout string) map[string]bool {
	out := map[string]bool{}
	unescape := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%25", "%")
	for _, l := range strings.Split(stdout, "\n") {
		if v, ok := strings.CutPrefix(l, MaskCommand); ok {
			out[unescape.Replace(strings.TrimSuffix(v, "\r"))] = true
		}
	}
	return out
}

// CheckRegistered fails t for every secret named that stdout did not
// register with ::add-mask::: the value, or each line of a multi-line
// value (the runner masks line by line), and its base64 form.
func (s *Scanner) CheckRegistered(t testing.TB, mode, stdout string, names ...string) {
	t.Helper()
	reg := Registered(stdout)
	byName := map[string]Secret{}
	for _, sec := range s.Secrets() {
		byName[sec.Name] = sec
	}
	for _, name := range names {
		sec, ok := byName[name]
		if !ok || sec.Unmasked {
			t.Errorf("leak scan: %s is no secret that must be registered", name)
			continue
		}
		want := []string{sec.Value}
		if strings.Contains(sec.Value, "\n") {
			want = nil
			for _, l := range strings.Split(sec.Value, "\n") {
				if l = strings.TrimSpace(l); len(l) >= minLine {
					want = append(want, l)
				}
			}
		}
		want = append(want, base64.StdEncoding.EncodeToString([]byte(sec.Value)))
		for _, w := range want {
			if !reg[w] {
				t.Errorf("%s: %s was not registered with %s (its %d-character value or a line of it)", mode, name, MaskCommand, len(w))
			}
		}
	}
}

// Redact is text with every form of every secret replaced by <SECRET>,
// and what ::add-mask:: lines register dropped, for the messages of a
// failing test.
func (s *Scanner) Redact(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, MaskCommand) {
			lines[i] = MaskCommand + "…"
		}
	}
	text = strings.Join(lines, "\n")
	var forms []string
	for _, sec := range s.Secrets() {
		for _, f := range Forms(sec.Value) {
			forms = append(forms, f.Text)
		}
	}
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	for _, f := range forms {
		text = strings.ReplaceAll(text, f, "<SECRET>")
	}
	return text
}
