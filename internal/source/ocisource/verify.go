package ocisource

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// What cosign writes when it signs an artifact with a key (its
// signature "tag" layout, which Flux's spec.verify.provider cosign
// checks): the signature manifest at tag sha256-<hex>.sig, each layer
// a simple-signing payload naming the artifact's digest, its signature
// in this annotation.
const (
	CosignSignatureAnnotation = "dev.cosignproject.cosign/signature"
	cosignPayloadType         = "cosign container image signature"
	maxSignaturePayload       = 1 << 20
)

// Keys are the public keys an artifact's cosign signature must verify
// with: one is enough.
type Keys []crypto.PublicKey

// ParseKeys reads the public keys of spec.verify.secretRef's Secret:
// every value holding a PEM public key (cosign.pub), by key name in the
// errors. A Secret holding none is an error.
func ParseKeys(values map[string]string) (Keys, error) {
	var keys Keys
	for _, k := range slices.Sorted(maps.Keys(values)) {
		rest := []byte(values[k])
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if block.Type != "PUBLIC KEY" {
				return nil, fmt.Errorf("%s: a PEM block of type %s, not a PUBLIC KEY", k, block.Type)
			}
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%s: not a public key: %w", k, err)
			}
			keys = append(keys, pub)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("the Secret holds no PEM public key (cosign.pub)")
	}
	return keys, nil
}

// VerifyError is an artifact whose signature does not verify: nothing
// of it is used.
type VerifyError struct{ Err error }

func (e *VerifyError) Error() string { return e.Err.Error() }
func (e *VerifyError) Unwrap() error { return e.Err }

// verifyCosign checks that the artifact digest of repo is signed by one
// of keys, as cosign verify --key does: the signature manifest's layers
// are simple-signing payloads naming digest, each signed (ECDSA, RSA or
// Ed25519 over its SHA-256) in its annotation.
func verifyCosign(repo name.Repository, digest v1.Hash, keys Keys, opts []remote.Option) error {
	sigTag := repo.Tag(digest.Algorithm + "-" + digest.Hex + ".sig")
	img, err := remote.Image(sigTag, opts...)
	if err != nil {
		// What the registry said is its status, never its words.
		return &VerifyError{fmt.Errorf("no cosign signature of %s (tag %s): %s", digest, sigTag.TagStr(), explain(err, nil, "").Error())}
	}
	manifest, err := img.Manifest()
	if err != nil {
		return &VerifyError{err}
	}
	var why []string
	for _, l := range manifest.Layers {
		sig, err := base64.StdEncoding.DecodeString(l.Annotations[CosignSignatureAnnotation])
		if err != nil || len(sig) == 0 {
			why = append(why, "a layer without a signature")
			continue
		}
		if l.Size > maxSignaturePayload {
			why = append(why, "a payload over 1 MiB")
			continue
		}
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			return &VerifyError{err}
		}
		rc, err := layer.Compressed()
		if err != nil {
			return &VerifyError{err}
		}
		payload, err := io.ReadAll(io.LimitReader(rc, maxSignaturePayload+1))
		rc.Close()
		if err != nil {
			return &VerifyError{err}
		}
		if !signedBy(payload, sig, keys) {
			why = append(why, "a signature no key of spec.verify.secretRef verifies")
			continue
		}
		named, err := payloadDigest(payload)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		if named != digest.String() {
			why = append(why, "a signature of another artifact ("+named+")")
			continue
		}
		return nil
	}
	if len(why) == 0 {
		why = []string{"no signature"}
	}
	slices.Sort(why)
	return &VerifyError{fmt.Errorf("%s is not signed by a key of spec.verify.secretRef: %s", digest, strings.Join(slices.Compact(why), "; "))}
}

// check verifies the artifact digest of repo as v says: with its keys,
// else keyless; nil verifies nothing.
func (v *Verification) check(ctx context.Context, repo name.Repository, digest v1.Hash, opts []remote.Option) error {
	switch {
	case v == nil:
		return nil
	case len(v.Keys) > 0:
		return verifyCosign(repo, digest, v.Keys, opts)
	case v.Keyless != nil:
		return verifyKeyless(ctx, repo, digest, v.Keyless, opts)
	}
	return &VerifyError{errors.New("spec.verify names neither a key nor keyless verification")}
}

// signedBy says whether sig is a signature of payload by one of keys.
func signedBy(payload, sig []byte, keys Keys) bool {
	sum := sha256.Sum256(payload)
	for _, k := range keys {
		switch pub := k.(type) {
		case *ecdsa.PublicKey:
			if ecdsa.VerifyASN1(pub, sum[:], sig) {
				return true
			}
		case *rsa.PublicKey:
			if rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil || rsa.VerifyPSS(pub, crypto.SHA256, sum[:], sig, nil) == nil {
				return true
			}
		case ed25519.PublicKey:
			if ed25519.Verify(pub, payload, sig) {
				return true
			}
		}
	}
	return false
}
