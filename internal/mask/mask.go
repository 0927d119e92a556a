// Package mask hides secret values from everything the tool prints.
package mask

import (
	"bytes"
	"encoding/base64"
	"io"
	"sort"
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

// Add registers values, and their base64 forms, to be hidden. It returns the
// values that were new, for callers that must announce them (::add-mask::).
func (m *Masker) Add(values ...string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var added []string
	for _, v := range values {
		if len(strings.TrimSpace(v)) < minLen {
			continue
		}
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			// Multi-line values are masked line by line, as the runner does.
			for _, line := range strings.Split(form, "\n") {
				line = strings.TrimSpace(line)
				if len(line) < minLen || m.values[line] {
					continue
				}
				m.values[line] = true
				added = append(added, line)
			}
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
