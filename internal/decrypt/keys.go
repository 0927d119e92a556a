package decrypt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"filippo.io/age"
)

// ParseAgeKeys parses the contents of an age keys file or of a SOPS_AGE_KEY
// value: one or more AGE-SECRET-KEY-1… identities separated by newlines or
// whitespace, with blank lines and '#' comment lines ignored (the format
// age-keygen writes). It returns the identities in order. Errors name the
// line but never echo its content, which may be key material.
func ParseAgeKeys(data []byte) ([]string, error) {
	var keys []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, word := range strings.Fields(line) {
			if _, err := parseIdentity(word); err != nil {
				return nil, fmt.Errorf("age keys line %d: %w", n, err)
			}
			keys = append(keys, word)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading age keys: %w", err)
	}
	if len(keys) == 0 {
		return nil, errors.New("age keys: no AGE-SECRET-KEY-1 identity found")
	}
	return keys, nil
}

// ParseKeys parses what stands in for a Flux decryption Secret: age
// identities (as ParseAgeKeys reads them) and armored OpenPGP private key
// blocks (as ParsePGPKeys), in any order, in one text. It returns each age
// identity and each PGP block, in order of kind, for Options.Keys. Errors
// name the line or the key but never echo key material.
func ParseKeys(data []byte) ([]string, error) {
	blocks, rest, err := splitPGPBlocks(string(data))
	if err != nil {
		return nil, err
	}
	if !hasContent(rest) {
		if len(blocks) == 0 {
			return nil, errors.New("keys: no AGE-SECRET-KEY-1 identity or PGP private key block found")
		}
		return blocks, nil
	}
	ids, err := ParseAgeKeys([]byte(rest))
	if err != nil {
		return nil, err
	}
	return append(ids, blocks...), nil
}

// LoadPGPKeys reads armored PGP private key files (ParsePGPKeys).
func LoadPGPKeys(files []string) ([]string, error) {
	var keys []string
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading PGP keys: %w", err)
		}
		blocks, err := ParsePGPKeys(data)
		if err != nil {
			return nil, fmt.Errorf("PGP keys in %s: %w", p, err)
		}
		keys = append(keys, blocks...)
	}
	return keys, nil
}

// parseIdentity parses one native age identity. The underlying parse error
// is dropped on purpose: bech32 errors can quote parts of the key.
func parseIdentity(s string) (age.Identity, error) {
	switch {
	case strings.HasPrefix(s, "AGE-SECRET-KEY-PQ-1"):
		id, err := age.ParseHybridIdentity(s)
		if err != nil {
			return nil, errors.New("malformed AGE-SECRET-KEY-PQ-1 identity")
		}
		return id, nil
	case strings.HasPrefix(s, "AGE-SECRET-KEY-1"):
		id, err := age.ParseX25519Identity(s)
		if err != nil {
			return nil, errors.New("malformed AGE-SECRET-KEY-1 identity")
		}
		return id, nil
	default:
		return nil, errors.New("not an age secret key (want AGE-SECRET-KEY-1…)")
	}
}

// LoadAgeIdentities gathers age identities the way sops users expect:
// $SOPS_AGE_KEY, $SOPS_AGE_KEY_FILE and extra key files, in that order.
// getenv is passed in so this package never reads the process environment
// behind the caller's back.
func LoadAgeIdentities(getenv func(string) string, files []string) ([]string, error) {
	var ids []string
	add := func(what string, data []byte) error {
		keys, err := ParseAgeKeys(data)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		ids = append(ids, keys...)
		return nil
	}
	if v := getenv("SOPS_AGE_KEY"); v != "" {
		if err := add("SOPS_AGE_KEY", []byte(v)); err != nil {
			return nil, err
		}
	}
	if p := getenv("SOPS_AGE_KEY_FILE"); p != "" {
		files = append([]string{p}, files...)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading age keys: %w", err)
		}
		if err := add("age keys in "+p, data); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
