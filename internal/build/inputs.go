package build

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

// Inputs are what a build depended on below its root: the files it read
// and the directories whose entries it looked at (listed, walked, or
// probed for a kustomization file), as paths relative to the root. Hashing
// them again later (Digest) tells whether the same build would give the
// same result.
type Inputs struct {
	Files []string `json:"files"`
	Dirs  []string `json:"dirs"`
	// Complete is false when the build also read something outside the
	// root (a remote base), which no digest covers.
	Complete bool `json:"complete"`
}

// recorder collects a build's inputs as confinedFS serves them.
type recorder struct {
	root     string
	mu       sync.Mutex
	files    map[string]bool
	dirs     map[string]bool
	outsider bool
}

func newRecorder(root string) *recorder {
	return &recorder{root: root, files: map[string]bool{}, dirs: map[string]bool{}}
}

// file records a file read; dir a directory whose entries were looked at.
// Paths are as asked for (not resolved), so a symlink retargeted later
// changes what the path reads. Paths outside the root (the wrapper
// kustomization, which options describe) are not inputs, except clones of
// remote bases, which make the record incomplete.
func (r *recorder) file(path string) { r.add(r.files, path) }
func (r *recorder) dir(path string)  { r.add(r.dirs, path) }

func (r *recorder) add(set map[string]bool, path string) {
	if r == nil {
		return
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rel, ok := paths.Within(r.root, abs)
	if !ok {
		return
	}
	set[filepath.ToSlash(rel)] = true
}

// incomplete marks the record incomplete.
func (r *recorder) incomplete() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.outsider = true
	r.mu.Unlock()
}

func (r *recorder) inputs() Inputs {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Inputs{Files: sortedKeys(r.files), Dirs: sortedKeys(r.dirs), Complete: !r.outsider}
}

// Digest hashes, below root, the contents of in's files and the entries
// (names and types) of its directories; a path that does not exist hashes
// as missing. Two equal digests mean every input reads the same.
func (in Inputs) Digest(root string) (string, error) {
	h := sha256.New()
	for _, rel := range in.Files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(h, "f %q missing\n", rel)
		case err != nil:
			return "", fmt.Errorf("hashing %s: %w", rel, err)
		default:
			sum := sha256.Sum256(data)
			fmt.Fprintf(h, "f %q %x\n", rel, sum)
		}
	}
	for _, rel := range in.Dirs {
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			fmt.Fprintf(h, "d %q missing\n", rel)
		case err != nil:
			return "", fmt.Errorf("hashing %s: %w", rel, err)
		default:
			var b strings.Builder
			for _, e := range entries {
				fmt.Fprintf(&b, "%s:%s/", e.Name(), e.Type())
			}
			fmt.Fprintf(h, "d %q %s\n", rel, b.String())
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
