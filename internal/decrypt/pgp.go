package decrypt

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
)

// PGP data keys are decrypted here, in memory, with the OpenPGP library
// sops itself uses (ProtonMail's go-crypto), rather than through sops's
// pgp key source: that one reads its keyring from a GnuPG home on disk
// (secring.gpg or pubring.gpg, which GnuPG 2.1+ no longer writes), falls
// back to running the gpg binary whatever happened, and asks gpg-agent or
// the terminal for a passphrase. Here no file is written, nothing is
// executed and nothing prompts: a key protected by a passphrase is
// refused when it is given.

// The armor lines around an OpenPGP key block.
const (
	pgpPrivateBegin = "-----BEGIN PGP PRIVATE KEY BLOCK-----"
	pgpPrivateEnd   = "-----END PGP PRIVATE KEY BLOCK-----"
	pgpPublicBegin  = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
)

// isPGPKey tells an armored PGP private key block from an age identity in
// Options.Keys.
func isPGPKey(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), pgpPrivateBegin) }

// parsePGPKey reads one armored private key block (it may hold several
// keys) and checks that every key in it can decrypt without a passphrase.
// Errors name keys by fingerprint and never quote the block.
func parsePGPKey(block string) (openpgp.EntityList, error) {
	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(block))
	if err != nil {
		// go-crypto's errors describe packets, not key material, but the
		// block is the user's secret: say only what is wrong with it.
		return nil, errors.New("malformed PGP private key block")
	}
	for _, e := range ring {
		fp := pgpFingerprint(e)
		if e.PrivateKey == nil {
			return nil, fmt.Errorf("PGP key %s: the block holds no private key", fp)
		}
		if e.PrivateKey.Encrypted {
			return nil, fmt.Errorf("PGP key %s is protected by a passphrase, which cannot be entered here: export it without one", fp)
		}
		for _, sub := range e.Subkeys {
			if sub.PrivateKey != nil && sub.PrivateKey.Encrypted {
				return nil, fmt.Errorf("PGP key %s: a subkey is protected by a passphrase, which cannot be entered here: export it without one", fp)
			}
		}
	}
	if len(ring) == 0 {
		return nil, errors.New("the PGP private key block holds no key")
	}
	return ring, nil
}

// pgpFingerprint is e's fingerprint as sops records it: upper-case hex.
func pgpFingerprint(e *openpgp.Entity) string {
	return strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint))
}

// splitPGPBlocks cuts the armored private key blocks out of text and
// returns them, and text with each block replaced by as many newlines as it
// spanned (so that line numbers in what is left still match the input).
func splitPGPBlocks(text string) (blocks []string, rest string, err error) {
	var b strings.Builder
	for {
		i := strings.Index(text, pgpPrivateBegin)
		if i < 0 {
			b.WriteString(text)
			break
		}
		b.WriteString(text[:i])
		j := strings.Index(text[i:], pgpPrivateEnd)
		if j < 0 {
			return nil, "", fmt.Errorf("PGP private key %d: the block has no END line", len(blocks)+1)
		}
		block := text[i : i+j+len(pgpPrivateEnd)]
		if _, err := parsePGPKey(block); err != nil {
			return nil, "", fmt.Errorf("PGP private key %d: %w", len(blocks)+1, err)
		}
		blocks = append(blocks, block+"\n")
		b.WriteString(strings.Repeat("\n", strings.Count(block, "\n")))
		text = text[i+j+len(pgpPrivateEnd):]
	}
	rest = b.String()
	if strings.Contains(rest, pgpPublicBegin) {
		return nil, "", errors.New("a PGP public key block where a private key is needed (BEGIN PGP PRIVATE KEY BLOCK, as gpg exports secret keys)")
	}
	return blocks, rest, nil
}

// ParsePGPKeys parses armored OpenPGP private key blocks (the output of
// `gpg --export-secret-keys --armor`, one or more), as a Flux decryption
// Secret's *.asc entries hold them, and returns each block. Keys protected
// by a passphrase are refused. Errors never echo the data.
func ParsePGPKeys(data []byte) ([]string, error) {
	blocks, rest, err := splitPGPBlocks(string(data))
	if err != nil {
		return nil, err
	}
	if hasContent(rest) {
		return nil, errors.New("PGP keys: text outside the PGP private key blocks")
	}
	if len(blocks) == 0 {
		return nil, errors.New("PGP keys: no PGP private key block found")
	}
	return blocks, nil
}

// hasContent reports whether text holds anything but blank and '#'
// comment lines.
func hasContent(text string) bool {
	for line := range strings.Lines(text) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return true
		}
	}
	return false
}

// errNoPGPKeys is the PGP failure when none are configured.
var errNoPGPKeys = fmt.Errorf("%w (no PGP private keys configured)", ErrNoMatchingPGPKey)

// decryptPGP decrypts a data key encrypted for a PGP key with the
// configured private keys.
func (s *keyService) decryptPGP(ciphertext []byte) ([]byte, error) {
	if len(s.pgp) == 0 {
		return nil, errNoPGPKeys
	}
	block, err := armor.Decode(bytes.NewReader(ciphertext))
	if err != nil {
		return nil, fmt.Errorf("%w: the encrypted data key is not an armored PGP message", ErrMalformed)
	}
	md, err := openpgp.ReadMessage(block.Body, s.pgp, nil, nil)
	switch {
	case errors.Is(err, pgperrors.ErrKeyIncorrect):
		return nil, ErrNoMatchingPGPKey
	case err != nil:
		return nil, fmt.Errorf("%w: the encrypted data key is not a PGP message this tool can read (%v)", ErrMalformed, err)
	case !md.IsEncrypted || md.DecryptedWith.PrivateKey == nil:
		// A literal packet where the encrypted data key should be: not
		// something sops wrote.
		return nil, fmt.Errorf("%w: the PGP data key is not encrypted", ErrMalformed)
	}
	plain, err := io.ReadAll(md.UnverifiedBody)
	if err != nil {
		// Reading to the end checks the message's integrity (MDC or AEAD).
		return nil, fmt.Errorf("%w: the encrypted data key was changed (%v)", ErrInvalidCiphertext, err)
	}
	return plain, nil
}
