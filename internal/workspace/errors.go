package workspace

import "errors"

// Sentinel errors wrapped by Copy, for callers that branch with
// errors.Is. The messages around them name the offending entry.
var (
	// ErrOutsideRoot: a symlink leaves the repository root.
	ErrOutsideRoot = errors.New("outside the repository root")
	// ErrUnsupportedFile: an entry is neither a regular file, a directory
	// nor a symlink (device, socket, named pipe…), or is a dangling symlink.
	ErrUnsupportedFile = errors.New("unsupported file type")
	// ErrTooLarge: the regular files add up to more than Options.MaxBytes.
	ErrTooLarge = errors.New("repository too large")
	// ErrTooManyFiles: the tree holds more than Options.MaxFiles entries.
	ErrTooManyFiles = errors.New("too many files")
)
