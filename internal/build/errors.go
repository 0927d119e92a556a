package build

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// notADirectory matches kustomize's "accumulation err='E': <E again, or
// the resource is not a directory>"; $1 is E.
var notADirectory = regexp.MustCompile(`accumulation err='(.*)': must build at directory: (?:'[^']*': file is not directory|not a valid directory: evalsymlink failure on '[^']*' : lstat [^:]*: no such file or directory)`)

// kustomizeError is a failed kustomize build. Its message is kustomize's,
// with paths made relative to the root and the wrapper kustomization's
// own noise removed, since users know neither the scratch copy nor the
// wrapper; the original error stays available through Unwrap.
type kustomizeError struct {
	msg string
	err error
}

func (e *kustomizeError) Error() string { return e.msg }
func (e *kustomizeError) Unwrap() error { return e.err }

// newKustomizeError wraps err from building path through the wrapper in
// wrapperDir; at names path for the user.
func newKustomizeError(err error, at, root, wrapperDir, path string) error {
	msg := err.Error()
	if entry, rerr := filepath.Rel(wrapperDir, path); rerr == nil {
		// Kustomize first tries the wrapper's one resource as a file (the
		// message depends on the load restrictor).
		for _, tried := range []string{"'%s' must resolve to a file", "read %s: is a directory"} {
			noise := "accumulation err='accumulating resources from '%s': " + tried + "': "
			msg = strings.Replace(msg, fmt.Sprintf(noise, filepath.ToSlash(entry), path), "", 1)
		}
	}
	msg = strings.ReplaceAll(msg, root+string(filepath.Separator), "")
	msg = strings.ReplaceAll(msg, wrapperDir+string(filepath.Separator), "")
	// Kustomize tries a resource that fails to load as a file as a
	// directory too, and reports both; for a file that exists (or a path
	// that exists as neither) the second says nothing more.
	msg = notADirectory.ReplaceAllString(msg, "$1")
	hint := "kustomize build " + relTo(root, path)
	return &kustomizeError{
		msg: fmt.Sprintf("kustomize build of %s failed (run '%s' in the repository to reproduce): %s", at, hint, msg),
		err: err,
	}
}

// FileError is a build error that a file of the repository caused: a
// kustomization naming a missing resource, a manifest that is not YAML or
// not an object, an object a substitution broke. It says where, for
// annotations that point into the file; its message is Err's, so wrapping
// an error in one changes no text.
type FileError struct {
	// File is relative to the build's root (the repository), with
	// forward slashes.
	File string
	// Line is 1-based; 0 when the file is known and the line is not.
	Line int
	Err  error
}

func (e *FileError) Error() string { return e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// FileErrors lists the FileErrors in err's tree, in order: one for each
// error joined into err that has one (the outermost, when one wraps
// another).
func FileErrors(err error) []*FileError {
	var out []*FileError
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil, filesHidden:
		case *FileError:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// WithoutFiles is err with its FileErrors hidden from FileErrors (errors.Is
// and errors.As still see through it): for a build of files that are not
// the repository's, such as a chart's rendered objects in a scratch
// directory, whose names would point nowhere.
func WithoutFiles(err error) error {
	if err == nil {
		return nil
	}
	return filesHidden{err}
}

type filesHidden struct{ err error }

func (e filesHidden) Error() string { return e.err.Error() }
func (e filesHidden) Unwrap() error { return e.err }

// atFile wraps err as caused by file (relative to root) at line.
func atFile(err error, root, file string, line int) error {
	return &FileError{File: relTo(root, file), Line: line, Err: err}
}
