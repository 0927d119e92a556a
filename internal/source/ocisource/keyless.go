package ocisource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// What cosign writes beside the signature when it signs keyless (cosign
// v2's signature tag): the Fulcio certificate, its chain, the Rekor
// entry's inclusion promise and, with a timestamp authority, its
// RFC 3161 timestamp. Cosign v3 attaches a Sigstore bundle instead, as
// an OCI referrer of this artifact type (its one layer the bundle).
const (
	CosignCertificateAnnotation = "dev.sigstore.cosign/certificate"
	CosignChainAnnotation       = "dev.sigstore.cosign/chain"
	CosignBundleAnnotation      = "dev.sigstore.cosign/bundle"
	CosignTimestampAnnotation   = "dev.sigstore.cosign/rfc3161timestamp"
	SigstoreBundleArtifactType  = "application/vnd.dev.sigstore.bundle.v0.3+json"
	sigstoreBundlePrefix        = "application/vnd.dev.sigstore.bundle"
	// maxReferrers bounds the referrers read for one artifact.
	maxReferrers = 32
)

// Identity is one of spec.verify.matchOIDCIdentity: regular expressions
// the Fulcio certificate's OIDC issuer and subject (its SAN) must both
// match.
type Identity struct {
	Issuer, Subject string
}

// Keyless is what verifying a keyless cosign signature takes.
type Keyless struct {
	// Identities are spec.verify.matchOIDCIdentity: one must match the
	// signer's certificate. None matches any identity, as Flux does.
	Identities []Identity
	// Sigstore is the trust the signature is verified against; its zero
	// value is Sigstore's public good (DefaultSigstore).
	Sigstore Sigstore
}

// Verification is spec.verify with provider cosign: the artifact must
// carry a signature that one of Keys verifies, or, keyless (no Keys), a
// Fulcio certificate of a matching identity logged in Rekor.
type Verification struct {
	Keys    Keys
	Keyless *Keyless
}

// CheckIdentities compiles identities as Flux reads them, naming the
// entry whose expression does not compile.
func CheckIdentities(ids []Identity) error {
	var errs []error
	for i, id := range ids {
		for _, kv := range [][2]string{{"issuer", id.Issuer}, {"subject", id.Subject}} {
			field, re := kv[0], kv[1]
			if re == "" {
				errs = append(errs, fmt.Errorf("spec.verify.matchOIDCIdentity[%d].%s: required", i, field))
				continue
			}
			if _, err := regexp.Compile(re); err != nil {
				errs = append(errs, fmt.Errorf("spec.verify.matchOIDCIdentity[%d].%s: %w", i, field, err))
			}
		}
	}
	return errors.Join(errs...)
}

// policies are the certificate identities of ids for sigstore-go. As in
// cosign (and so Flux), an expression matches anywhere in the value
// unless it is anchored (^…$).
func policies(ids []Identity) ([]verify.PolicyOption, error) {
	if len(ids) == 0 {
		ids = []Identity{{Issuer: ".*", Subject: ".*"}}
	}
	var out []verify.PolicyOption
	for _, id := range ids {
		ci, err := verify.NewShortCertificateIdentity("", id.Issuer, "", id.Subject)
		if err != nil {
			return nil, err
		}
		out = append(out, verify.WithCertificateIdentity(ci))
	}
	return out, nil
}

// verifyKeyless checks that the artifact digest of repo carries a keyless
// cosign signature of one of k's identities: cosign v3's Sigstore bundles
// (OCI referrers, through the referrers API or its tag fallback) and
// cosign v2's signature tag (sha256-<hex>.sig, the certificate and the
// Rekor entry in its annotations) alike. One verified signature is enough.
func verifyKeyless(ctx context.Context, repo name.Repository, digest v1.Hash, k *Keyless, opts []remote.Option) error {
	trust := k.Sigstore
	if trust.Root == nil {
		trust = DefaultSigstore()
	}
	tm, err := trust.Root(ctx)
	if err != nil {
		return &VerifyError{err}
	}
	vopts := []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1)}
	if trust.SCTs > 0 {
		vopts = append(vopts, verify.WithSignedCertificateTimestamps(trust.SCTs))
	}
	v, err := verify.NewVerifier(tm, vopts...)
	if err != nil {
		return &VerifyError{fmt.Errorf("the trusted root: %w", err)}
	}
	ids, err := policies(k.Identities)
	if err != nil {
		return &VerifyError{err}
	}
	var why []string
	found, ok, err := verifyBundles(repo, digest, v, ids, opts, &why)
	if err != nil || ok {
		return err
	}
	ok, err = verifyLegacy(repo, digest, v, ids, opts, &why, found)
	if err != nil || ok {
		return err
	}
	if len(why) == 0 {
		why = []string{fmt.Sprintf("no Sigstore bundle among its referrers, no signature tag %s", repo.Tag(digest.Algorithm+"-"+digest.Hex+".sig").TagStr())}
	}
	slices.Sort(why)
	return &VerifyError{fmt.Errorf("no matching signatures: %s is not signed keyless by %s: %s", digest, describeIdentities(k.Identities), strings.Join(slices.Compact(why), "; "))}
}

func describeIdentities(ids []Identity) string {
	if len(ids) == 0 {
		return "any identity (spec.verify.matchOIDCIdentity is empty)"
	}
	var s []string
	for _, id := range ids {
		s = append(s, fmt.Sprintf("issuer %q subject %q", id.Issuer, id.Subject))
	}
	return "an identity of spec.verify.matchOIDCIdentity (" + strings.Join(s, ", ") + ")"
}

// verifyBundles verifies the Sigstore bundles attached to digest as
// referrers (cosign v3): found says there were any.
func verifyBundles(repo name.Repository, digest v1.Hash, v *verify.Verifier, ids []verify.PolicyOption, opts []remote.Option, why *[]string) (found, ok bool, err error) {
	idx, err := remote.Referrers(repo.Digest(digest.String()), opts...)
	if err != nil {
		// A registry without the referrers API and no fallback tag has
		// no bundles; what it said is never quoted.
		return false, false, nil
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return false, false, nil
	}
	want, err := hex.DecodeString(digest.Hex)
	if err != nil {
		return false, false, &VerifyError{err}
	}
	n := 0
	for _, d := range im.Manifests {
		if !strings.HasPrefix(d.ArtifactType, sigstoreBundlePrefix) {
			continue
		}
		if n++; n > maxReferrers {
			break
		}
		found = true
		raw, err := bundleOf(repo, d.Digest, opts)
		if err != nil {
			*why = append(*why, err.Error())
			continue
		}
		b := &bundle.Bundle{}
		if err := b.UnmarshalJSON(raw); err != nil {
			*why = append(*why, "a Sigstore bundle that does not parse: "+err.Error())
			continue
		}
		if _, err := v.Verify(b, verify.NewPolicy(verify.WithArtifactDigest(digest.Algorithm, want), ids...)); err != nil {
			*why = append(*why, "a Sigstore bundle that does not verify: "+err.Error())
			continue
		}
		return true, true, nil
	}
	return found, false, nil
}

// bundleOf reads the Sigstore bundle of the referrer manifest d: its
// first layer of a bundle's media type, bounded.
func bundleOf(repo name.Repository, d v1.Hash, opts []remote.Option) ([]byte, error) {
	img, err := remote.Image(repo.Digest(d.String()), opts...)
	if err != nil {
		return nil, fmt.Errorf("a Sigstore bundle referrer %s that cannot be read", d)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("a Sigstore bundle referrer %s that cannot be read", d)
	}
	for _, l := range m.Layers {
		if !strings.HasPrefix(string(l.MediaType), sigstoreBundlePrefix) {
			continue
		}
		if l.Size > maxSignaturePayload {
			return nil, errors.New("a Sigstore bundle over 1 MiB")
		}
		return readLayer(img, l.Digest)
	}
	return nil, fmt.Errorf("a Sigstore bundle referrer %s without a bundle layer", d)
}

func readLayer(img v1.Image, d v1.Hash) ([]byte, error) {
	layer, err := img.LayerByDigest(d)
	if err != nil {
		return nil, err
	}
	rc, err := layer.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxSignaturePayload+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSignaturePayload {
		return nil, errors.New("a layer over 1 MiB")
	}
	return b, nil
}

// verifyLegacy verifies the keyless signatures of cosign v2's signature
// tag: each layer a simple-signing payload naming digest, signed by the
// Fulcio certificate in its annotations, its Rekor entry's inclusion
// promise beside it. Each is read into a Sigstore bundle (v0.1: an
// inclusion promise, no proof) and verified as one. bundles says cosign
// v3 bundles were found (then a missing tag is no reason of its own).
func verifyLegacy(repo name.Repository, digest v1.Hash, v *verify.Verifier, ids []verify.PolicyOption, opts []remote.Option, why *[]string, bundles bool) (bool, error) {
	sigTag := repo.Tag(digest.Algorithm + "-" + digest.Hex + ".sig")
	img, err := remote.Image(sigTag, opts...)
	if err != nil {
		if !bundles {
			*why = append(*why, fmt.Sprintf("no Sigstore bundle among its referrers, and no signature tag %s (%s)", sigTag.TagStr(), explain(err, nil, "").Error()))
		}
		return false, nil
	}
	manifest, err := img.Manifest()
	if err != nil {
		return false, &VerifyError{err}
	}
	for _, l := range manifest.Layers {
		if l.Size > maxSignaturePayload {
			*why = append(*why, "a payload over 1 MiB")
			continue
		}
		payload, err := readLayer(img, l.Digest)
		if err != nil {
			return false, &VerifyError{err}
		}
		b, err := LegacyBundle(payload, l.Annotations)
		if err != nil {
			*why = append(*why, err.Error())
			continue
		}
		if _, err := v.Verify(b, verify.NewPolicy(verify.WithArtifact(bytes.NewReader(payload)), ids...)); err != nil {
			*why = append(*why, "a signature that does not verify: "+err.Error())
			continue
		}
		if got, err := payloadDigest(payload); err != nil {
			*why = append(*why, err.Error())
			continue
		} else if got != digest.String() {
			*why = append(*why, "a signature of another artifact ("+got+")")
			continue
		}
		return true, nil
	}
	return false, nil
}

// payloadDigest is the artifact digest a simple-signing payload names.
func payloadDigest(payload []byte) (string, error) {
	var p struct {
		Critical struct {
			Image struct {
				Digest string `json:"docker-manifest-digest"`
			} `json:"image"`
			Type string `json:"type"`
		} `json:"critical"`
	}
	if err := json.Unmarshal(payload, &p); err != nil || p.Critical.Type != cosignPayloadType {
		return "", errors.New("a payload that is not a cosign signature's")
	}
	return p.Critical.Image.Digest, nil
}

// rekorBundle is cosign v2's dev.sigstore.cosign/bundle annotation: the
// Rekor entry of the signature, with its signed entry timestamp.
type rekorBundle struct {
	SignedEntryTimestamp []byte `json:"SignedEntryTimestamp"`
	Payload              struct {
		Body           string `json:"body"`
		IntegratedTime int64  `json:"integratedTime"`
		LogIndex       int64  `json:"logIndex"`
		LogID          string `json:"logID"`
	} `json:"Payload"`
}

// LegacyBundle reads a layer of cosign v2's signature tag (payload, its
// annotations) signed keyless into a Sigstore bundle: the message
// signature over payload, the Fulcio certificate, the Rekor entry with
// its inclusion promise, and the RFC 3161 timestamp when there is one.
func LegacyBundle(payload []byte, annotations map[string]string) (*bundle.Bundle, error) {
	sig, err := base64.StdEncoding.DecodeString(annotations[CosignSignatureAnnotation])
	if err != nil || len(sig) == 0 {
		return nil, errors.New("a layer without a signature")
	}
	certPEM := annotations[CosignCertificateAnnotation]
	if certPEM == "" {
		return nil, errors.New("a signature without a certificate (signed with a key, not keyless)")
	}
	block, _ := pem.Decode([]byte(certPEM))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("a certificate annotation that is not a PEM certificate")
	}
	if annotations[CosignBundleAnnotation] == "" {
		return nil, errors.New("a signature without its Rekor entry (" + CosignBundleAnnotation + ")")
	}
	var rb rekorBundle
	if err := json.Unmarshal([]byte(annotations[CosignBundleAnnotation]), &rb); err != nil {
		return nil, fmt.Errorf("a Rekor entry annotation that does not parse: %w", err)
	}
	body, err := base64.StdEncoding.DecodeString(rb.Payload.Body)
	if err != nil {
		return nil, fmt.Errorf("a Rekor entry whose body does not decode: %w", err)
	}
	logID, err := hex.DecodeString(rb.Payload.LogID)
	if err != nil {
		return nil, fmt.Errorf("a Rekor entry whose log ID does not decode: %w", err)
	}
	tle, err := TransparencyLogEntry(body, rb.Payload.IntegratedTime, rb.Payload.LogIndex, logID, rb.SignedEntryTimestamp)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(payload)
	pb := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle+json;version=0.1",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_X509CertificateChain{X509CertificateChain: &protocommon.X509CertificateChain{
				Certificates: []*protocommon.X509Certificate{{RawBytes: block.Bytes}}}},
			TlogEntries: []*protorekor.TransparencyLogEntry{tle},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig}},
	}
	if ts := annotations[CosignTimestampAnnotation]; ts != "" {
		var t struct {
			SignedRFC3161Timestamp []byte `json:"SignedRFC3161Timestamp"`
		}
		if err := json.Unmarshal([]byte(ts), &t); err != nil {
			return nil, fmt.Errorf("a timestamp annotation that does not parse: %w", err)
		}
		pb.VerificationMaterial.TimestampVerificationData = &protobundle.TimestampVerificationData{
			Rfc3161Timestamps: []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: t.SignedRFC3161Timestamp}}}
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		return nil, fmt.Errorf("a keyless signature that is not a valid bundle: %w", err)
	}
	return b, nil
}

// TransparencyLogEntry is a Rekor (v1) entry as a bundle holds it: its
// canonical body, where it is in which log, when, and the log's signed
// promise to include it (set).
func TransparencyLogEntry(body []byte, integratedTime, logIndex int64, logID, set []byte) (*protorekor.TransparencyLogEntry, error) {
	if _, err := tlog.NewEntry(body, integratedTime, logIndex, logID, set, nil); err != nil { //nolint:staticcheck // cosign v2's entries are Rekor v1's
		return nil, fmt.Errorf("a Rekor entry that does not parse: %w", err)
	}
	var kv struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(body, &kv); err != nil {
		return nil, fmt.Errorf("a Rekor entry that does not parse: %w", err)
	}
	return &protorekor.TransparencyLogEntry{
		LogIndex: logIndex, LogId: &protocommon.LogId{KeyId: logID}, IntegratedTime: integratedTime,
		KindVersion:       &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion},
		InclusionPromise:  &protorekor.InclusionPromise{SignedEntryTimestamp: set},
		CanonicalizedBody: body,
	}, nil
}
