package ocisource

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// DefaultMaxSize bounds the bytes a layer extracts to (the files' sizes
// summed), as fluxcd/pkg/tar bounds an artifact's by default.
const DefaultMaxSize = 100 << 20

// extractOptions say how a layer is extracted.
type extractOptions struct {
	// maxSize bounds the bytes extracted.
	maxSize int64
	// skipLinks drops symbolic and hard links, as source-controller does
	// when it extracts a layer (spec.layerSelector.operation extract);
	// else they are refused, as kustomize-controller refuses them in an
	// artifact it downloads (operation copy).
	skipLinks bool
}

// ExtractError is a layer that does not extract: not a tar+gzip, an
// entry that would land outside the directory, a link, too big.
type ExtractError struct{ Err error }

func (e *ExtractError) Error() string { return e.Err.Error() }
func (e *ExtractError) Unwrap() error { return e.Err }

// Extract extracts the tar+gzip stream r into dir (which must exist),
// as a layer is: through an os.Root of dir, names climbing out refused,
// links left out (and returned), at most maxSize bytes. An
// ArtifactGenerator's Extract strategy unpacks a source's tarball so.
func Extract(r io.Reader, dir string, maxSize int64) (skipped []string, err error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	return extract(r, dir, extractOptions{maxSize: maxSize, skipLinks: true})
}

// extract extracts the tar+gzip stream r into dir, which must exist.
// Every entry is written through an os.Root of dir, so that nothing
// lands outside it whatever the archive holds; names that would (an
// absolute path, "..") are refused before that, by name. Only
// directories and regular files are written. It returns the links
// skipped.
func extract(r io.Reader, dir string, o extractOptions) (skipped []string, err error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, &ExtractError{fmt.Errorf("the layer is not gzip-compressed (%v): only a tar+gzip layer is extracted", err)}
	}
	defer zr.Close()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	tr := tar.NewReader(zr)
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return skipped, &ExtractError{fmt.Errorf("the layer is not a tar archive: %w", err)}
		}
		name, err := entryName(h.Name)
		if err != nil {
			return skipped, &ExtractError{err}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if name == "." {
				continue
			}
			if err := root.MkdirAll(name, 0o755); err != nil {
				return skipped, &ExtractError{fmt.Errorf("entry %q: %w", h.Name, err)}
			}
		case tar.TypeReg:
			if h.Size < 0 || total+h.Size > o.maxSize {
				return skipped, &ExtractError{fmt.Errorf("entry %q: the layer extracts to more than %d bytes", h.Name, o.maxSize)}
			}
			if dir := path.Dir(name); dir != "." {
				if err := root.MkdirAll(dir, 0o755); err != nil {
					return skipped, &ExtractError{fmt.Errorf("entry %q: %w", h.Name, err)}
				}
			}
			// Owner read and write always; execute as archived; never
			// writable by others.
			mode := os.FileMode(h.Mode).Perm()&0o755 | 0o600
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
			if err != nil {
				return skipped, &ExtractError{fmt.Errorf("entry %q: %w", h.Name, err)}
			}
			n, err := io.Copy(f, io.LimitReader(tr, o.maxSize-total+1))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			total += n
			if err != nil {
				return skipped, &ExtractError{fmt.Errorf("entry %q: %w", h.Name, err)}
			}
			if total > o.maxSize {
				return skipped, &ExtractError{fmt.Errorf("entry %q: the layer extracts to more than %d bytes", h.Name, o.maxSize)}
			}
		case tar.TypeSymlink, tar.TypeLink:
			what := "a symbolic link"
			if h.Typeflag == tar.TypeLink {
				what = "a hard link"
			}
			if !o.skipLinks {
				return skipped, &ExtractError{fmt.Errorf("entry %q is %s (to %q), which is not extracted", h.Name, what, h.Linkname)}
			}
			skipped = append(skipped, name)
		default:
			return skipped, &ExtractError{fmt.Errorf("entry %q is of tar type %q: only directories and regular files are extracted", h.Name, h.Typeflag)}
		}
	}
	return skipped, nil
}

// entryName is a tar entry's name as a path relative to the directory
// extracted into, refused when it is absolute or climbs out of it.
func entryName(name string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("an entry has no name")
	case strings.Contains(name, `\`):
		return "", fmt.Errorf("entry %q: a backslash in a name is refused", name)
	case strings.HasPrefix(name, "/"):
		return "", fmt.Errorf("entry %q: an absolute path is refused", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("entry %q: a path climbing out of the artifact (..) is refused", name)
		}
	}
	return path.Clean(name), nil
}
