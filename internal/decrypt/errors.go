package decrypt

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped inside *Error, for errors.Is.
var (
	// ErrNoMatchingIdentity: none of our age identities can decrypt the
	// document's data key.
	ErrNoMatchingIdentity = errors.New("no age identity matches the file's recipients")
	// ErrMACMismatch: the document was changed without sops, or is corrupt.
	ErrMACMismatch = errors.New("sops MAC mismatch: the file was modified without sops or is corrupted")
	// ErrMalformed: the sops document cannot be parsed or a value cannot be
	// decrypted (bad ciphertext, truncated file, wrong type).
	ErrMalformed = errors.New("malformed sops data")
	// ErrOutsideRoot: a referenced path, or a symlink on it, leaves the root.
	ErrOutsideRoot = errors.New("outside the repository root")
	// ErrNotRegular: a referenced path is not a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: a file exceeds Options.MaxFileSize.
	ErrTooLarge = errors.New("file too large to decrypt")
)

// Error is a decryption failure of one object or file. Its message never
// contains plaintext or key material; recipients (public keys) are named so
// the user can tell which key the file wanted.
type Error struct {
	// Object is the object ID ("Secret/ns/name") or the file path relative
	// to the root.
	Object string
	// Source is the file the object was built from, or the kustomization
	// that referenced the file; empty when unknown.
	Source string
	// Err is the cause.
	Err error
}

func (e *Error) Error() string {
	if e.Source == "" {
		return fmt.Sprintf("decryption failed for '%s': %v", e.Object, e.Err)
	}
	return fmt.Sprintf("decryption failed for '%s' (%s): %v", e.Object, e.Source, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// StillEncryptedError reports a Secret that still carries sops data after
// decryption. DecryptObjects never hands such an object on as decrypted.
type StillEncryptedError struct {
	// Object is the object ID ("Secret/ns/name").
	Object string
	// Source is the file the object was built from; empty when unknown.
	Source string
	// Field says where the encrypted data is, e.g. "data.password" or
	// "sops"; it never holds the value.
	Field string
}

func (e *StillEncryptedError) Error() string {
	src := ""
	if e.Source != "" {
		src = " (" + e.Source + ")"
	}
	return fmt.Sprintf("'%s'%s is still encrypted after decryption: %s holds sops-encrypted data", e.Object, src, e.Field)
}
