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
