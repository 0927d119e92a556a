package units

import (
	"bytes"
	"io"
	"sync"
)

// prefixed returns a writer that starts every line written to w with
// "[name] ", whole lines at a time, so that units running in parallel do
// not interleave within a line.
func prefixed(w io.Writer, name string) io.Writer {
	return &prefixWriter{w: w, prefix: []byte("[" + name + "] ")}
}

type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix []byte
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := append(append([]byte{}, p.prefix...), p.buf[:i+1]...)
		p.buf = p.buf[i+1:]
		if _, err := p.w.Write(line); err != nil {
			return len(b), err
		}
	}
}
