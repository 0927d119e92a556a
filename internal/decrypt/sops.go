package decrypt

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopsstore"
)

// formatNames are sops's own names for its formats.
var formatNames = map[formats.Format]string{
	formats.Binary: "binary",
	formats.Dotenv: "dotenv",
	formats.Ini:    "ini",
	formats.Json:   "json",
	formats.Yaml:   "yaml",
}

// markers are byte sequences only a sops-encrypted document of each format
// contains (its encrypted MAC), as Flux detects them. The binary format is a
// JSON envelope, so it shares JSON's marker.
var markers = map[formats.Format][]byte{
	formats.Binary: []byte(`"mac": "ENC[`),
	formats.Dotenv: []byte("sops_mac=ENC["),
	formats.Ini:    []byte("[sops]"),
	formats.Json:   []byte(`"mac": "ENC[`),
	formats.Yaml:   []byte("mac: ENC["),
}

// encValue starts every value sops encrypted, in every format.
const encValue = object.EncryptedPrefix

// formatFor returns the format sops picks for a file name, or unknown when
// the extension says nothing (sops's "binary").
func formatFor(name string, unknown formats.Format) formats.Format {
	if strings.HasSuffix(name, ".dockerconfigjson") {
		return formats.Json
	}
	if f := formats.FormatForPath(name); f != formats.Binary {
		return f
	}
	return unknown
}

// detect reports whether data is a sops-encrypted document and in which
// format, trying guess (from the file name) first.
func detect(data []byte, guess formats.Format) (formats.Format, bool) {
	if bytes.Contains(data, markers[guess]) {
		return guess, true
	}
	for _, f := range []formats.Format{formats.Yaml, formats.Json, formats.Dotenv, formats.Ini} {
		if bytes.Contains(data, markers[f]) {
			return f, true
		}
	}
	return 0, false
}

// decryptData decrypts a whole sops document in format f and returns the
// plaintext in the same format. With verifyMAC the document's MAC must
// match, as the sops CLI requires.
func (d *Decryptor) decryptData(ctx context.Context, data []byte, f formats.Format, verifyMAC bool) ([]byte, error) {
	return safely(f, func() ([]byte, error) {
		store := sopsstore.For(f)
		tree, err := store.LoadEncryptedFile(data)
		if err != nil {
			return nil, fmt.Errorf("%w: cannot load %s data: %s", ErrMalformed, formatNames[f], redact(err))
		}
		if err := d.decryptTree(ctx, &tree, verifyMAC); err != nil {
			return nil, err
		}
		out, err := store.EmitPlainFile(tree.Branches)
		if err != nil {
			return nil, fmt.Errorf("%w: cannot emit decrypted %s data: %s", ErrMalformed, formatNames[f], redact(err))
		}
		return out, nil
	})
}

// safely runs fn, turning a panic into an error: malformed input can make
// sops panic (Flux recovers the same way). The panic value is dropped as it
// may quote the input.
func safely(f formats.Format, fn func() ([]byte, error)) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w: sops panicked while decoding %s data", ErrMalformed, formatNames[f])
		}
	}()
	return fn()
}

// decryptTree recovers the data key with our keys and decrypts the tree in
// place.
func (d *Decryptor) decryptTree(ctx context.Context, tree *sops.Tree, verifyMAC bool) error {
	ks := d.newKeyService(ctx)
	// Age keys are tried first: they need no network.
	key, err := tree.Metadata.GetDataKeyWithKeyServices(ks.clients(), sops.DefaultDecryptionOrder)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return dataKeyError(tree.Metadata, ks, err)
	}
	cipher := aes.NewCipher()
	encrypted := encryptedLeaves(tree.Branches)
	mac, err := tree.Decrypt(key, cipher)
	if err != nil {
		return fmt.Errorf("%w: %s%s", ErrMalformed, redact(err), hint(err))
	}
	if d.reveal != nil {
		d.reveal(valuesAt(tree.Branches, encrypted))
	}
	if !verifyMAC {
		return nil
	}
	want, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, key, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil || want != mac {
		// Neither MAC is printed: it is a hash of the plaintext.
		return ErrMACMismatch
	}
	return nil
}

// dataKeyError lists why each key failed. The sops error is used only when
// no key failed: it folds the key errors into one string.
func dataKeyError(md sops.Metadata, ks *keyService, sopsErr error) error {
	switch {
	case len(md.KeyGroups) == 0:
		return fmt.Errorf("%w: the sops metadata lists no keys", ErrMalformed)
	case len(ks.failures) == 0:
		// Enough key groups decrypted but their Shamir shares do not combine.
		return fmt.Errorf("%w: %s", ErrMalformed, redact(sopsErr))
	}
	e := &DataKeyError{Keys: ks.failures, Groups: len(md.KeyGroups), Threshold: md.ShamirThreshold}
	if e.Threshold <= 0 || e.Threshold > e.Groups {
		e.Threshold = e.Groups
	}
	return e
}

// hint explains the two value errors users cause.
func hint(err error) string {
	switch msg := err.Error(); {
	case strings.Contains(msg, "does not match sops' data format"):
		return " (a value that should be encrypted is plaintext: added after encryption, by hand or by kustomize?)"
	case strings.Contains(msg, "message authentication failed"):
		return " (an encrypted value was changed, or moved to another key)"
	}
	return ""
}

// leaky matches the parts of sops error messages that quote document values,
// which may be plaintext.
var leaky = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?s)Input string .*? does not match sops' data format`), "Input string <redacted> does not match sops' data format"},
	{regexp.MustCompile(`(?s)invalid dotenv input line: .*`), "invalid dotenv input line: <redacted>"},
	{regexp.MustCompile(`(?s)Could not convert .*? to bytes`), "Could not convert <redacted> to bytes"},
	{regexp.MustCompile(`(?s)Error encoding value .*`), "Error encoding value <redacted>"},
	{regexp.MustCompile(`(?s)Expected JSON object key, got .*`), "Expected JSON object key, got <redacted>"},
	{regexp.MustCompile(`(?s)Got .* of type .* instead`), "Got <redacted> instead"},
}

// redact returns err's message with quoted document values removed.
func redact(err error) string {
	msg := err.Error()
	for _, l := range leaky {
		msg = l.re.ReplaceAllLiteralString(msg, l.repl)
	}
	return msg
}

// encryptedLeaves are the positions (see walkTree) of the tree's
// encrypted values.
func encryptedLeaves(branches sops.TreeBranches) map[string]bool {
	out := map[string]bool{}
	for i, b := range branches {
		walkTree(b, []int{i}, func(pos []int, leaf any) {
			if s, ok := leaf.(string); ok && object.IsEncrypted(s) {
				out[fmt.Sprint(pos)] = true
			}
		})
	}
	return out
}

// valuesAt are the values at the positions that were encrypted.
func valuesAt(branches sops.TreeBranches, encrypted map[string]bool) []string {
	var out []string
	for i, b := range branches {
		walkTree(b, []int{i}, func(pos []int, leaf any) {
			if encrypted[fmt.Sprint(pos)] {
				out = append(out, fmt.Sprint(leaf))
			}
		})
	}
	return out
}

// walkTree calls visit with each leaf value of a sops tree and its
// position (the index of each branch item and list element on the way).
func walkTree(v any, pos []int, visit func(pos []int, leaf any)) {
	switch t := v.(type) {
	case sops.TreeBranch:
		for i, item := range t {
			walkTree(item.Value, append(pos, i), visit)
		}
	case []any:
		for i, e := range t {
			walkTree(e, append(pos, i), visit)
		}
	default:
		visit(pos, t)
	}
}
