package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Making a copy costs a directory and a link per file, and removing it
// as much again: on a loaded disk, mkdir and unlink are the dearest
// system calls a run makes, and a configuration of a hundred units
// rendered offline spent most of its time in them. A snapshot told to
// Reuse keeps each copy when its Workspace is closed and hands it to the
// next Copy reset: what the unit wrote there removed, what it replaced or
// removed linked again.
//
// Resetting reads only the directories that changed. Every directory of
// a kept copy has its modification time set to settled once it is as the
// snapshot lists it; adding, removing, renaming or replacing an entry
// (WriteFile's rename included) sets it to now, so a directory still at
// settled holds what the copy made. In a directory that changed, each
// entry is compared with the one the copy made (same inode, size, mode
// and modification time). A file rewritten in place (never done: see
// WriteFile) would also have changed its original, which a fresh copy
// links too.

// settled is the modification time of a kept copy's directories while
// they hold what the copy made.
var settled = time.Unix(1, 0)

// kept is one copy a Reuse snapshot keeps, and what it made.
type kept struct {
	root string
	c    *copier
	// files are the entries the copy made, by path relative to root, as
	// lstat saw them once made; dirs its directories, once settled.
	files, dirs map[string]fs.FileInfo
}

// reuse is a snapshot's kept copies.
type reuse struct {
	mu     sync.Mutex
	free   []*kept
	closed bool
}

// Reuse makes Copy hand out copies closed earlier, reset, until Close:
// for a run that copies the snapshot for many units. Call it before the
// first Copy.
func (s *Snapshot) Reuse() {
	s.reuse = &reuse{}
}

// Close removes the copies a Reuse snapshot keeps; a copy closed after it
// is removed. It does nothing to a snapshot that reuses none.
func (s *Snapshot) Close() error {
	if s == nil || s.reuse == nil {
		return nil
	}
	s.reuse.mu.Lock()
	free := s.reuse.free
	s.reuse.free, s.reuse.closed = nil, true
	s.reuse.mu.Unlock()
	// At once: removing is bound by the disk's latency, not its
	// throughput.
	errs := make([]error, len(free))
	var wg sync.WaitGroup
	for i, k := range free {
		wg.Go(func() {
			if err := os.RemoveAll(k.root); err != nil {
				errs[i] = fmt.Errorf("removing workspace '%s': %w", k.root, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// take is a kept copy, nil when there is none.
func (r *reuse) take() *kept {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		k := r.free[n-1]
		r.free = r.free[:n-1]
		return k
	}
	return nil
}

// give keeps k, reset, for the next Copy; it removes k when it does not
// reset, or the snapshot is closed.
func (r *reuse) give(s *Snapshot, k *kept) error {
	err := k.reset(s)
	r.mu.Lock()
	if err == nil && !r.closed {
		r.free = append(r.free, k)
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	if rerr := os.RemoveAll(k.root); rerr != nil {
		return fmt.Errorf("removing workspace '%s': %w", k.root, rerr)
	}
	return nil
}

// record notes the entry rel the copy just made.
func (k *kept) record(rel string) error {
	fi, err := os.Lstat(filepath.Join(k.root, rel))
	if err != nil {
		return err
	}
	k.files[rel] = fi
	return nil
}

// settle sets the modification time of the copy's directories rels to
// settled and records them.
func (k *kept) settle(rels []string) error {
	for _, rel := range rels {
		dir := filepath.Join(k.root, rel)
		if err := os.Chtimes(dir, settled, settled); err != nil {
			return err
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return err
		}
		k.dirs[rel] = fi
	}
	return nil
}

// reset makes the copy the snapshot's again: in every directory that
// changed, each file, symlink or directory that the copy did not make, or
// that is not as it made it, is removed, and every entry missing then is
// made again.
func (k *kept) reset(s *Snapshot) error {
	var changed []string
	for rel, made := range k.dirs {
		fi, err := os.Lstat(filepath.Join(k.root, rel))
		switch {
		case err != nil || !os.SameFile(made, fi):
			// Gone or replaced: its parent changed too, and sees to it.
		case !fi.ModTime().Equal(made.ModTime()):
			changed = append(changed, rel)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	idx := s.index()
	var missing []entry
	var touched []string
	for _, dir := range changed {
		ents, err := os.ReadDir(filepath.Join(k.root, dir))
		if err != nil {
			return err
		}
		here := map[string]bool{}
		for _, d := range ents {
			rel := filepath.Join(dir, d.Name())
			if dir == "." {
				rel = d.Name()
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if made, ok := k.dirs[rel]; ok && d.IsDir() && os.SameFile(made, fi) {
				here[rel] = true
				continue
			}
			if made, ok := k.files[rel]; ok && !d.IsDir() && sameEntry(made, fi) {
				here[rel] = true
				continue
			}
			if err := os.RemoveAll(filepath.Join(k.root, rel)); err != nil {
				return err
			}
		}
		for _, e := range idx.files[dir] {
			if !here[e.rel] {
				missing = append(missing, e)
			}
		}
		for _, sub := range idx.dirs[dir] {
			if !here[sub] {
				// Made again, whole: forget what the copy made in it.
				for _, e := range idx.below(sub) {
					missing = append(missing, e)
				}
				for rel := range k.dirs {
					if rel == sub || strings.HasPrefix(rel, sub+string(filepath.Separator)) {
						delete(k.dirs, rel)
						delete(k.c.made, rel)
					}
				}
			}
		}
		touched = append(touched, dir)
	}
	for _, e := range missing {
		if err := k.c.copyEntry(e); err != nil {
			return err
		}
		if err := k.record(e.rel); err != nil {
			return err
		}
	}
	for rel := range k.c.made {
		if _, ok := k.dirs[rel]; !ok {
			touched = append(touched, rel)
		}
	}
	return k.settle(touched)
}

// dirIndex is a snapshot's entries by directory.
type dirIndex struct {
	// files are the entries directly in each directory, dirs the
	// directories directly in it, by relative path ("." the root).
	files map[string][]entry
	dirs  map[string][]string
	all   []entry // sorted by path
}

// index is the snapshot's entries by directory, worked out once.
func (s *Snapshot) index() *dirIndex {
	s.indexOnce.Do(func() {
		idx := &dirIndex{files: map[string][]entry{}, dirs: map[string][]string{}, all: s.entries}
		seen := map[string]bool{".": true}
		for _, e := range s.entries {
			dir := filepath.Dir(e.rel)
			idx.files[dir] = append(idx.files[dir], e)
			for ; !seen[dir]; dir = filepath.Dir(dir) {
				seen[dir] = true
				parent := filepath.Dir(dir)
				idx.dirs[parent] = append(idx.dirs[parent], dir)
			}
		}
		s.dirIndex = idx
	})
	return s.dirIndex
}

// below are the entries in dir and its subdirectories.
func (idx *dirIndex) below(dir string) []entry {
	prefix := dir + string(filepath.Separator)
	i := sort.Search(len(idx.all), func(i int) bool { return idx.all[i].rel >= prefix })
	var out []entry
	for ; i < len(idx.all) && strings.HasPrefix(idx.all[i].rel, prefix); i++ {
		out = append(out, idx.all[i])
	}
	return out
}

// sameEntry says whether fi is still the entry made, as lstat saw it.
func sameEntry(made, fi fs.FileInfo) bool {
	return os.SameFile(made, fi) && fi.Mode() == made.Mode() && fi.Size() == made.Size() && fi.ModTime().Equal(made.ModTime())
}
