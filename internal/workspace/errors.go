package workspace

import "errors"

// Sentinel errors wrapped by List, for callers that branch with
// errors.Is. The messages around them name the offending entry.
var (
	// ErrUnsupportedFile: an entry is neither a regular file, a directory
	// nor a symlink (device, socket, named pipe…).
	ErrUnsupportedFile = errors.New("unsupported file type")
	// ErrTooManyFiles: the tree holds more than Options.MaxFiles files.
	ErrTooManyFiles = errors.New("too many files")
)
