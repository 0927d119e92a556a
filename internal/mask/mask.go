// Package mask hides secret values from everything the tool prints.
package mask

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Replacement is printed in place of a secret value.
const Replacement = "***"

// minLen: shorter values would mask ordinary text everywhere ("1", "ok");
// GitHub's runner makes the same trade-off for short masks.
const minLen = 4

// Masker holds the values to hide. It is safe for concurrent use.
type Masker struct {
	mu     sync.RWMutex
	values map[string]bool
	sorted []string // longest first, so a value is replaced before its parts
}

// New returns an empty Masker.
func New() *Masker { return &Masker{values: map[string]bool{}} }

// Add registers values, and the forms they take on their way out (see
// Forms), to be hidden. It returns the forms that were new, for callers
// that must announce them (::add-mask::).
func (m *Masker) Add(values ...string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var added []string
	for _, v := range values {
		if len(strings.TrimSpace(v)) < minLen {
			continue
		}
		for _, form := range Forms(v) {
			if len(form) < minLen || m.values[form] {
				continue
			}
			m.values[form] = true
			added = append(added, form)
		}
	}
	if len(added) > 0 {
		m.sorted = m.sorted[:0]
		for v := range m.values {
			m.sorted = append(m.sorted, v)
		}
		sort.Slice(m.sorted, func(i, j int) bool { return len(m.sorted[i]) > len(m.sorted[j]) })
	}
	return added
}

// Forms are the texts v may be written as, v itself first: its base64
// forms (a Secret's data, a kubeconfig's *-data fields; the URL alphabet
// and unpadded forms of tokens), and v escaped as an API server's message
// quotes it (Go's %q, JSON with or without HTML escapes), as a URL
// carries it, and YAML single-quoted, each of those also escaped once
// more as JSON (a message quoting v, encoded as JSON). A multi-line value
// is hidden line by line, as the runner does, each line in its escaped
// forms too. Forms never contain a newline.
func Forms(v string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(f string) {
		if f = strings.TrimSpace(f); f != "" && !strings.Contains(f, "\n") && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	escaped := func(s string) {
		once := []string{
			jsonEscape(s, true), jsonEscape(s, false),
			unquote(strconv.Quote(s)), unquote(strconv.QuoteToASCII(s)),
			url.QueryEscape(s), url.PathEscape(s),
			strings.ReplaceAll(s, "'", "''"),
		}
		for _, e := range once {
			add(e)
		}
		// A message quoting s, encoded as JSON before it is masked (a
		// result printed or set as an output, a stored status).
		for _, e := range once {
			add(jsonEscape(e, true))
			add(jsonEscape(e, false))
		}
	}
	lines := strings.Split(v, "\n")
	for _, l := range lines {
		add(l)
	}
	if len(lines) > 1 {
		for _, l := range lines {
			escaped(strings.TrimSpace(l))
		}
	}
	escaped(v)
	b := []byte(v)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		add(enc.EncodeToString(b))
	}
	return out
}

// jsonEscape is s as a JSON string holds it, without the quotes.
func jsonEscape(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // a string always encodes
	return unquote(strings.TrimSuffix(b.String(), "\n"))
}

func unquote(quoted string) string { return quoted[1 : len(quoted)-1] }

// String returns s with every registered value replaced.
func (m *Masker) String(s string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, v := range m.sorted {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Replacement)
		}
	}
	return s
}

// Writer returns a writer that masks whole lines before passing them to w.
// Partial lines are held until a newline or Flush.
func (m *Masker) Writer(w io.Writer) *Writer { return &Writer{m: m, w: w} }

// Writer masks what passes through it, line by line.
type Writer struct {
	m   *Masker
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := w.m.String(string(w.buf[:i+1]))
		w.buf = w.buf[i+1:]
		if _, err := io.WriteString(w.w, line); err != nil {
			return len(p), err
		}
	}
}

// Flush writes a held partial line.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(w.w, w.m.String(string(w.buf)))
	w.buf = nil
	return err
}
