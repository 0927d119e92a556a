package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Snapshot is the list of files a run builds from, made once for all the
// units of the run: in a git work tree, what git tracks plus the untracked
// files it does not ignore (what a commit of the work tree would hold, as
// Flux's source artifact does); elsewhere, every file but .git. Copy makes
// a private copy of it for one unit.
type Snapshot struct {
	root    string
	entries []entry
	opts    Options
	// probe, tempDir and linkable: see linkableTempDir.
	probe    sync.Once
	tempDir  string
	linkable bool
	// reuse keeps copies for the next Copy (see Reuse); nil keeps none.
	reuse *reuse
	// dirIndex: see index.
	indexOnce sync.Once
	dirIndex  *dirIndex
}

// entry is one file to copy; directories are implied by the paths.
type entry struct {
	rel  string      // relative to the root, OS separators
	mode fs.FileMode // type bits and permissions
}

// List lists the files below root, an absolute path with symlinks
// evaluated (paths.Resolve gives one). Irregular files (named pipes,
// sockets, devices) are errors naming the file; so are more than
// Options.MaxFiles files.
func List(ctx context.Context, root string, opts Options) (*Snapshot, error) {
	opts = opts.withDefaults()
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("repository root '%s': not an absolute path", root)
	}
	if fi, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("repository root '%s': %w", root, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("repository root '%s': not a directory", root)
	}
	s := &Snapshot{root: root, opts: opts}
	files, err := gitFiles(ctx, root)
	if err != nil {
		return nil, err
	}
	if files == nil { // not a git work tree
		files = []string{"."}
	}
	for _, rel := range files {
		if err := s.add(ctx, rel); err != nil {
			return nil, err
		}
	}
	sort.Slice(s.entries, func(i, j int) bool { return s.entries[i].rel < s.entries[j].rel })
	return s, nil
}

// add adds the file rel, or every file below it when it is a directory
// (the root outside git, or a submodule).
func (s *Snapshot) add(ctx context.Context, rel string) error {
	return filepath.WalkDir(filepath.Join(s.root, rel), func(path string, d fs.DirEntry, err error) error {
		r, _ := filepath.Rel(s.root, path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && path == filepath.Join(s.root, rel):
			return nil // tracked, but deleted from the work tree
		case err != nil:
			return fmt.Errorf("'%s': %w", r, err)
		case ctx.Err() != nil:
			return ctx.Err()
		case d.Name() == ".git":
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's or submodule's .git file
		case d.IsDir():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("'%s': %w", r, err)
		}
		mode := info.Mode()
		if !mode.IsRegular() && mode&fs.ModeSymlink == 0 {
			return fmt.Errorf("'%s' is a %s; only regular files, directories and symlinks are supported: %w", r, describe(mode), ErrUnsupportedFile)
		}
		if len(s.entries) >= s.opts.MaxFiles {
			return fmt.Errorf("'%s': repository has more than %d files: %w", r, s.opts.MaxFiles, ErrTooManyFiles)
		}
		s.entries = append(s.entries, entry{rel: r, mode: mode})
		return nil
	})
}

// gitFiles lists, relative to root, the files git tracks below root and
// the untracked ones it does not ignore; nil when root is not in a git
// work tree (or git is not installed).
func gitFiles(ctx context.Context, root string) ([]string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, nil
	}
	inside, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--is-inside-work-tree").Output()
	if err != nil || strings.TrimSpace(string(inside)) != "true" {
		return nil, nil
	}
	cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the repository's files (git ls-files): %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" || seen[f] { // a file with conflicts is listed once per stage
			continue
		}
		seen[f] = true
		files = append(files, filepath.FromSlash(f))
	}
	return files, nil
}

// Len is the number of files listed.
func (s *Snapshot) Len() int { return len(s.entries) }

// Root is the directory listed.
func (s *Snapshot) Root() string { return s.root }

// Files are the regular files listed, relative to the root,
// slash-separated, sorted.
func (s *Snapshot) Files() []string {
	out := make([]string, 0, len(s.entries))
	for _, e := range s.entries {
		if e.mode.IsRegular() {
			out = append(out, filepath.ToSlash(e.rel))
		}
	}
	return out
}
