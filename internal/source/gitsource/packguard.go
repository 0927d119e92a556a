package gitsource

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// maxObjectsPerFile bounds the objects of a fetched pack, against its
// file limit: a commit's tree holds at most that many files, each with
// its directories' trees, and a fetch of a branch's history more.
const maxObjectsPerFile = 10

// guardedFS is the file system go-git keeps a fetch's objects in: the
// pack a fetch receives is checked as it is written (see packGuard).
type guardedFS struct {
	billy.Filesystem
	lim Limits
}

// TempFile is where go-git writes a pack it receives (tmp_pack_...).
func (g guardedFS) TempFile(dir, prefix string) (billy.File, error) {
	f, err := g.Filesystem.TempFile(dir, prefix)
	if err != nil || !strings.HasPrefix(prefix, "tmp_pack_") {
		return f, err
	}
	return newPackGuard(f, g.lim), nil
}

// packGuard is the file a fetched pack is written to. go-git's parser
// reads it back as it grows and holds every object whole in memory (a
// gigabyte blob of zeros is a megabyte on the wire), so every byte is
// read by a scanner of its own first, before it reaches the file: an
// object larger than the limit of one file (a blob's or a tree's size, a
// delta's target size), or a pack of too many objects, fails the write
// and so the fetch, before go-git reads that object.
type packGuard struct {
	billy.File
	lim Limits
	// feed hands the scanner each write; wants says it read all of it and
	// wants more; exited that it is done (err says why, nil when the pack
	// is within the limits or not one it can read).
	feed   chan []byte
	wants  chan struct{}
	exited chan struct{}
	err    error
	closed bool
}

func newPackGuard(f billy.File, lim Limits) *packGuard {
	g := &packGuard{File: f, lim: lim, feed: make(chan []byte), wants: make(chan struct{}), exited: make(chan struct{})}
	go g.scan()
	return g
}

func (g *packGuard) Write(p []byte) (int, error) {
	select {
	case <-g.exited:
	case g.feed <- p:
		select {
		case <-g.wants:
		case <-g.exited:
		}
	}
	select {
	case <-g.exited:
		if g.err != nil {
			return 0, g.err
		}
	default:
	}
	return g.File.Write(p)
}

func (g *packGuard) Close() error {
	if !g.closed {
		g.closed = true
		close(g.feed)
		<-g.exited
	}
	return g.File.Close()
}

// scan reads the pack's objects' headers as they are written.
func (g *packGuard) scan() {
	defer close(g.exited)
	s := packfile.NewScanner(&feedReader{g: g})
	_, count, err := s.Header()
	if err != nil {
		return // not a pack go-git will take either
	}
	if max := int64(g.lim.Files) * maxObjectsPerFile; int64(count) > max {
		g.err = &LimitError{Limit: "objects", Max: max}
		return
	}
	for range count {
		h, err := s.NextObjectHeader()
		if err != nil {
			return
		}
		switch {
		case h.Type.IsDelta():
			d := &deltaTarget{max: g.lim.FileBytes}
			if _, _, err := s.NextObject(d); err != nil {
				if d.err != nil {
					g.err = d.err
				}
				return
			}
		case h.Length > g.lim.FileBytes:
			g.err = &LimitError{Limit: "object bytes", Max: g.lim.FileBytes, Path: fmt.Sprintf("a %s of %d bytes", h.Type, h.Length)}
			return
		default:
			if _, _, err := s.NextObject(io.Discard); err != nil {
				return
			}
		}
	}
}

// feedReader reads what the guard is fed, one write after another.
type feedReader struct {
	g       *packGuard
	cur     []byte
	started bool
}

func (r *feedReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.started {
			r.g.wants <- struct{}{}
		}
		chunk, ok := <-r.g.feed
		if !ok {
			return 0, io.EOF
		}
		r.cur, r.started = chunk, true
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// deltaTarget reads a delta's header, its base's size then its target's
// (each a little-endian base-128 number), and fails when the target is
// larger than max.
type deltaTarget struct {
	max    int64
	header []byte
	done   bool
	err    error
}

var errDeltaTooLarge = errors.New("delta target too large")

func (d *deltaTarget) Write(p []byte) (int, error) {
	if d.done {
		return len(p), nil
	}
	d.header = append(d.header, p[:min(len(p), 20)]...)
	rest := d.header
	var sizes [2]int64
	for i := range sizes {
		var v int64
		var shift uint
		for {
			if len(rest) == 0 {
				return len(p), nil // more to come
			}
			b := rest[0]
			rest = rest[1:]
			v |= int64(b&0x7f) << shift
			shift += 7
			if b&0x80 == 0 || shift > 63 {
				break
			}
		}
		sizes[i] = v
	}
	d.done = true
	if sizes[1] > d.max {
		d.err = &LimitError{Limit: "object bytes", Max: d.max, Path: fmt.Sprintf("a delta making %d bytes", sizes[1])}
		return 0, errDeltaTooLarge
	}
	return len(p), nil
}
