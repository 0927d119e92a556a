package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/ignore"
)

// Limits on what a chart kept in a repository may make the run read: a
// pull request's chart is hostile input, and its files end up in memory.
const (
	// MaxChartBytes bounds the files of one chart directory, its
	// vendored subcharts included: Helm's own bound for a chart archive
	// once decompressed.
	MaxChartBytes = 100 << 20
	// MaxChartFiles bounds how many files one chart directory holds.
	MaxChartFiles = 10000
	// MaxChartDirDepth bounds how deep directories nest in a chart
	// directory, symlinks followed.
	MaxChartDirDepth = 64
	// MaxValuesFileBytes bounds a values file read from a repository.
	MaxValuesFileBytes = 10 << 20
)

// loadConfined loads the chart directory rel of the repository root as
// Helm's loader.LoadDir does (.helmignore, symlinks followed, a UTF-8 BOM
// dropped), except that every path it opens goes through root, so that
// no link, however many steps it takes, reads outside the repository; a
// link that leaves it, a link loop, and a chart over the MaxChart* limits
// fail naming the path (relative to the repository) and the limit.
func loadConfined(root *os.Root, rel string) (*chart.Chart, error) {
	rules := ignore.Empty()
	if data, err := readConfined(root, path.Join(rel, ignore.HelmIgnore), MaxValuesFileBytes); err != nil {
		return nil, err
	} else if data != nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(rel, ignore.HelmIgnore), err)
		}
	}
	rules.AddDefaults()
	w := &chartWalk{root: root, top: rel, rules: rules}
	top, err := w.stat(rel)
	if err != nil {
		return nil, err
	}
	if err := w.walk("", top, nil); err != nil {
		return nil, err
	}
	budget := int64(MaxChartBytes)
	for _, f := range w.files {
		if vendoredArchive(f.Name) {
			if err := archiveNesting(bytes.NewReader(f.Data), 1, &budget); err != nil {
				return nil, fmt.Errorf("%s: %w", path.Join(rel, f.Name), err)
			}
		}
	}
	return loader.LoadFiles(w.files)
}

// vendoredArchive says whether name, in a chart, is the archive of a
// vendored chart that Helm's loader unpacks (charts/NAME.tgz, in the
// chart or in a vendored chart's directory).
func vendoredArchive(name string) bool {
	dir, file := path.Split(name)
	return path.Base(dir) == "charts" && strings.HasSuffix(file, ".tgz")
}

// archiveNesting refuses the archive of a vendored chart whose own
// vendored archives nest deeper than MaxChartDependencyDepth (an archive
// may even hold itself: Helm's loader would recurse until the process
// dies), or that unpacks, with what it holds, to more than budget bytes.
// What is not an archive is left to Helm's loader to say.
func archiveNesting(r io.Reader, depth int, budget *int64) error {
	if depth > MaxChartDependencyDepth {
		return fmt.Errorf("vendored chart archives nest more than %d deep", MaxChartDependencyDepth)
	}
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil // the end, or Helm's loader says what is wrong
		}
		if *budget -= max(h.Size, 0); *budget < 0 {
			return fmt.Errorf("vendored chart archives unpack to more than %d MiB", MaxChartBytes>>20)
		}
		_, inChart, _ := strings.Cut(h.Name, "/") // below the archive's top directory
		if h.Typeflag != tar.TypeReg || !vendoredArchive(inChart) {
			continue // its data is skipped as the next header is read: counted above
		}
		data, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return nil
		}
		if err := archiveNesting(bytes.NewReader(data), depth+1, budget); err != nil {
			return fmt.Errorf("%s: %w", inChart, err)
		}
	}
}

// chartWalk reads a chart directory's files through a root.
type chartWalk struct {
	root  *os.Root
	top   string // the chart directory, relative to the root
	rules *ignore.Rules
	files []*archive.BufferedFile
	bytes int64
}

// stat is the file p (relative to the root) is, symlinks followed; a link
// that leads out of the root or nowhere fails naming p.
func (w *chartWalk) stat(p string) (fs.FileInfo, error) {
	fi, err := w.root.Stat(p)
	if err == nil {
		return fi, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if li, lerr := w.root.Lstat(p); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: a symlink to nothing", p)
		}
		return nil, fmt.Errorf("%s: not in the repository", p)
	}
	return nil, confinedError(p, err)
}

// confinedError names p and what os.Root said of it: that it leaves the
// repository when it refused to follow a link out of it.
func confinedError(p string, err error) error {
	if strings.Contains(err.Error(), "path escapes from parent") { // os.Root's words; the error is not exported
		return fmt.Errorf("%s: a symlink that leaves the repository", p)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// walk reads the directory n (relative to the chart; "" for the chart
// itself) whose info is fi; parents are the directories above it, to
// tell a link loop.
func (w *chartWalk) walk(n string, fi fs.FileInfo, parents []fs.FileInfo) error {
	p := path.Join(w.top, n)
	if slices.ContainsFunc(parents, func(d fs.FileInfo) bool { return os.SameFile(d, fi) }) {
		return fmt.Errorf("%s: a symlink loop (it leads to a directory above it)", p)
	}
	if len(parents) >= MaxChartDirDepth {
		return fmt.Errorf("%s: directories nest more than %d deep", p, MaxChartDirDepth)
	}
	d, err := w.root.Open(p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	parents = append(parents, fi)
	for _, e := range entries {
		cn := path.Join(n, e.Name())
		cp := path.Join(w.top, cn)
		cfi, err := w.stat(cp)
		if err != nil {
			return err
		}
		if cfi.IsDir() {
			if w.rules.Ignore(cn, cfi) {
				continue
			}
			if err := w.walk(cn, cfi, parents); err != nil {
				return err
			}
			continue
		}
		if w.rules.Ignore(cn, cfi) {
			continue
		}
		if !cfi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file: %s", cp, fileKind(cfi.Mode()))
		}
		if len(w.files) >= MaxChartFiles {
			return fmt.Errorf("%s: the chart holds more than %d files", w.top, MaxChartFiles)
		}
		data, err := readConfined(w.root, cp, MaxChartBytes-w.bytes)
		if err != nil {
			if errors.Is(err, errTooLarge) {
				return fmt.Errorf("%s: the chart's files are larger than %d MiB", w.top, MaxChartBytes>>20)
			}
			return err
		}
		w.bytes += int64(len(data))
		w.files = append(w.files, &archive.BufferedFile{Name: cn, ModTime: cfi.ModTime(), Data: bytes.TrimPrefix(data, utf8BOM)})
	}
	return nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// errTooLarge is a file over the bytes readConfined may read.
var errTooLarge = errors.New("too large")

// readConfined reads the regular file p (relative to root, links followed
// inside it) of at most limit bytes: nil when there is none, errTooLarge
// (wrapped) when it is larger, an error naming p when a link leaves the
// root or p is not a regular file.
func readConfined(root *os.Root, p string, limit int64) ([]byte, error) {
	fi, err := root.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, confinedError(p, err)
	}
	// Checked before it is opened: opening a named pipe would block.
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file: %s", p, fileKind(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %w", p, errTooLarge)
	}
	f, err := root.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w", p, errTooLarge)
	}
	return data, nil
}

// fileKind names what a file that is not a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}
