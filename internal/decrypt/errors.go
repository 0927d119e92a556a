package decrypt

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors wrapped inside *Error, for errors.Is.
var (
	// ErrNoMatchingIdentity: none of our age identities can decrypt the
	// data key encrypted for an age recipient.
	ErrNoMatchingIdentity = errors.New("no matching age identity")
	// ErrNoMatchingPGPKey: none of our PGP private keys can decrypt the
	// data key encrypted for a PGP key.
	ErrNoMatchingPGPKey = errors.New("no matching PGP private key")
	// ErrKMSDisabled: a data key is encrypted for AWS KMS but
	// Options.AWSKMS is off, so the key was not tried.
	ErrKMSDisabled = errors.New("not tried: AWS KMS decryption is disabled")
	// ErrAccessDenied: AWS refused the caller the KMS key, the role, or
	// did not recognise the credentials.
	ErrAccessDenied = errors.New("access denied")
	// ErrKeyNotFound: the KMS key does not exist (deleted, another account
	// or region, or a typo in the ARN).
	ErrKeyNotFound = errors.New("key not found")
	// ErrNoCredentials: no usable credentials for a key service (the AWS
	// SDK's credential chain found none, no Vault token, ...). The message
	// says which credentials.
	ErrNoCredentials = errors.New("no credentials")
	// ErrInvalidCiphertext: the key (or its key service) could not decrypt
	// the encrypted data key: it was changed, or for AWS KMS the
	// document's encryption context is wrong.
	ErrInvalidCiphertext = errors.New("invalid ciphertext")
	// ErrUnreachable: a key service (Vault, a cloud's KMS or its token
	// endpoint) could not be reached.
	ErrUnreachable = errors.New("key service unreachable")
	// ErrUnsupportedKey: a data key is encrypted for a key type this
	// package does not serve (HuaweiCloud KMS).
	ErrUnsupportedKey = errors.New("key type not supported (only age, PGP, AWS KMS, Vault transit, GCP KMS and Azure Key Vault are)")
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

// missingCredentials names the credentials that are missing ("AWS
// credentials"); errors.Is finds ErrNoCredentials.
type missingCredentials string

func (m missingCredentials) Error() string        { return "no " + string(m) }
func (m missingCredentials) Is(target error) bool { return target == ErrNoCredentials }

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

// OutsideRootError is a path that leaves the repository root, through ../
// or a symlink, as a kustomization lists it (or as DecryptFiles was given
// it). It is not an *Error: the kustomization is wrong whatever the keys,
// so it is worded as the build's errors are, naming the kustomization file
// and the entry to fix. Nothing outside the root is read. errors.Is finds
// ErrOutsideRoot.
type OutsideRootError struct {
	// Kustomization is the file that lists Entry, relative to the root;
	// empty for the path DecryptFiles was given.
	Kustomization string
	// Field says what Entry is: "resource", "component",
	// "secretGenerator file", … or "path".
	Field string
	// Entry is the path as written.
	Entry string
	// Symlink is set when the path leaves the root through a symlink
	// rather than through ../ or as an absolute path.
	Symlink bool
}

func (e *OutsideRootError) Error() string {
	how := ""
	if e.Symlink {
		how = " through a symlink"
	}
	msg := fmt.Sprintf("%s '%s' leads outside the repository root%s", e.Field, e.Entry, how)
	if e.Kustomization == "" {
		return msg
	}
	return fmt.Sprintf("kustomization %s: %s", e.Kustomization, msg)
}

// Unwrap returns ErrOutsideRoot.
func (e *OutsideRootError) Unwrap() error { return ErrOutsideRoot }

// KeyError says why one master key listed in a document could not decrypt
// its data key. It names the key by its public identifier only.
type KeyError struct {
	// Type is sops's name for the key type: "age", "kms", "pgp", …
	Type string
	// Key is the public identifier: the age recipient, the KMS key ARN, …
	Key string
	// Role is the IAM role assumed to use a KMS key; empty otherwise.
	Role string
	// Err is the cause; it wraps one of the sentinel errors when one
	// applies (ErrNoMatchingIdentity, ErrAccessDenied, …).
	Err error
}

// keyTypeNames are the key types as users know them.
var keyTypeNames = map[string]string{
	"age":      "age recipient",
	"kms":      "AWS KMS key",
	"pgp":      "PGP key",
	"gcp_kms":  "GCP KMS key",
	"azure_kv": "Azure Key Vault key",
	"hc_vault": "Vault transit key",
	"hckms":    "HuaweiCloud KMS key",
}

func (e *KeyError) Error() string {
	name := keyTypeNames[e.Type]
	if name == "" {
		name = e.Type + " key"
	}
	role := ""
	if e.Role != "" {
		role = " (role " + e.Role + ")"
	}
	return fmt.Sprintf("%s %s%s: %v", name, e.Key, role, e.Err)
}

// Unwrap returns the cause.
func (e *KeyError) Unwrap() error { return e.Err }

// DataKeyError reports that a document's data key could not be recovered:
// no key of a key group (or of enough groups, with Shamir key groups) could
// decrypt it. It is the Err of an *Error.
type DataKeyError struct {
	// Keys lists the keys tried, in the order they were tried, with why
	// each failed.
	Keys []*KeyError
	// Groups is the number of key groups in the document and Threshold
	// how many of them are needed; both matter only when Groups > 1.
	Groups, Threshold int
}

func (e *DataKeyError) Error() string {
	var b strings.Builder
	b.WriteString("cannot decrypt the data key")
	if e.Groups > 1 {
		fmt.Fprintf(&b, " (%d of its %d key groups are needed)", e.Threshold, e.Groups)
	}
	if len(e.Keys) == 0 {
		b.WriteString(": the sops metadata lists no usable key")
		return b.String()
	}
	b.WriteString(": ")
	for i, k := range e.Keys {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(k.Error())
	}
	return b.String()
}

// Unwrap returns every key's error, so errors.Is finds each cause.
func (e *DataKeyError) Unwrap() []error {
	errs := make([]error, len(e.Keys))
	for i, k := range e.Keys {
		errs[i] = k
	}
	return errs
}

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
