package ocitest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"google.golang.org/protobuf/proto"
)

// Sigstore is a test's own Sigstore (sigstore-go's VirtualSigstore: a
// Fulcio CA, a Rekor log, a timestamp authority), the trusted root keyless
// signatures are verified against in tests.
func Sigstore(t testing.TB) *ca.VirtualSigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// simpleSigning is cosign's payload naming the artifact payloadDigest of
// repo.
func simpleSigning(repo, payloadDigest string) []byte {
	return []byte(`{"critical":{"identity":{"docker-reference":"` + repo + `"},"image":{"docker-manifest-digest":"` + payloadDigest + `"},"type":"cosign container image signature"},"optional":null}`)
}

// KeylessSign pushes, for the artifact of digest in repository repo
// (host/path), what cosign v2's keyless sign writes: tag sha256-<hex>.sig,
// one layer of the simple-signing payload naming payloadDigest, signed by
// a Fulcio certificate vs issues to identity (its SAN) from issuer, the
// certificate and the Rekor entry (with its signed entry timestamp) in
// the layer's annotations.
func KeylessSign(t testing.TB, vs *ca.VirtualSigstore, repo, digest, payloadDigest, identity, issuer string) {
	t.Helper()
	payload := simpleSigning(repo, payloadDigest)
	e, err := vs.Sign(identity, issuer, payload)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := e.SignatureContent()
	if err != nil {
		t.Fatal(err)
	}
	vc, err := e.VerificationContent()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := e.TlogEntries()
	if err != nil || len(entries) != 1 {
		t.Fatalf("tlog entries %d: %v", len(entries), err)
	}
	tle := entries[0].TransparencyLogEntry()
	rekor, err := json.Marshal(map[string]any{
		"SignedEntryTimestamp": signedEntryTimestamp(t, vs, tle),
		"Payload": map[string]any{
			"body": base64.StdEncoding.EncodeToString(tle.CanonicalizedBody), "integratedTime": tle.IntegratedTime,
			"logIndex": tle.LogIndex, "logID": hex.EncodeToString(tle.GetLogId().GetKeyId()),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: vc.Certificate().Raw})
	layer := static.NewLayer(payload, "application/vnd.dev.cosign.simplesigning.v1+json")
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{Layer: layer,
		Annotations: map[string]string{
			"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sc.Signature()),
			"dev.sigstore.cosign/certificate":    string(certPEM),
			"dev.sigstore.cosign/chain":          string(certPEM),
			"dev.sigstore.cosign/bundle":         string(rekor),
		}})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(repo + ":" + strings.Replace(digest, ":", "-", 1) + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
}

// AttachBundle pushes, for the artifact of digest in repository repo,
// what cosign v3's sign writes: a Sigstore bundle (v0.3, a DSSE envelope
// of an in-toto statement whose subject is subjectDigest, signed by a
// Fulcio certificate vs issues to identity from issuer, its Rekor entry
// with an inclusion proof) attached as an OCI referrer of digest
// (artifactType application/vnd.dev.sigstore.bundle.v0.3+json), through
// the referrers API or, where the registry has none, its tag fallback.
func AttachBundle(t testing.TB, vs *ca.VirtualSigstore, repo, digest, subjectDigest, identity, issuer string) {
	t.Helper()
	algo, hexDigest, _ := strings.Cut(subjectDigest, ":")
	statement, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []map[string]any{{"name": repo, "digest": map[string]string{algo: hexDigest}}},
		"predicateType": "https://sigstore.dev/cosign/sign/v1",
		"predicate":     map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := vs.AttestAtTime(identity, issuer, statement, time.Now().Add(5*time.Minute), true)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := e.SignatureContent()
	if err != nil {
		t.Fatal(err)
	}
	vc, err := e.VerificationContent()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := e.TlogEntries()
	if err != nil {
		t.Fatal(err)
	}
	env := sc.(*bundle.Envelope).RawEnvelope()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var sigs []*protodsse.Signature
	for _, s := range env.Signatures {
		raw, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, &protodsse.Signature{Sig: raw, Keyid: s.KeyID})
	}
	var tles []*protorekor.TransparencyLogEntry
	for _, e := range entries {
		tle := proto.Clone(e.TransparencyLogEntry()).(*protorekor.TransparencyLogEntry)
		var kv struct{ Kind, APIVersion string }
		if err := json.Unmarshal(tle.CanonicalizedBody, &kv); err != nil {
			t.Fatal(err)
		}
		tle.KindVersion = &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: signedEntryTimestamp(t, vs, tle)}
		tles = append(tles, tle)
	}
	b, err := bundle.NewBundle(&protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:     &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TlogEntries: tles,
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{Payload: payload, PayloadType: env.PayloadType, Signatures: sigs}},
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	PushReferrer(t, repo, digest, "application/vnd.dev.sigstore.bundle.v0.3+json", raw)
}

// signedEntryTimestamp is vs's Rekor's promise to include tle (sigstore-go
// keeps the one it made to itself).
func signedEntryTimestamp(t testing.TB, vs *ca.VirtualSigstore, tle *protorekor.TransparencyLogEntry) []byte {
	t.Helper()
	set, err := vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
		IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.GetLogId().GetKeyId())})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// PushReferrer pushes an OCI 1.1 artifact manifest of artifactType, its
// one layer body (of that media type), whose subject is the manifest
// digest of repo: a referrer of it.
func PushReferrer(t testing.TB, repo, digest, artifactType string, body []byte) {
	t.Helper()
	r, err := name.NewRepository(repo)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := remote.Head(r.Digest(digest))
	if err != nil {
		t.Fatalf("the subject %s: %v", digest, err)
	}
	const emptyType = "application/vnd.oci.empty.v1+json"
	config := static.NewLayer([]byte("{}"), emptyType)
	layer := static.NewLayer(body, types.MediaType(artifactType))
	for _, l := range []v1.Layer{config, layer} {
		if err := remote.WriteLayer(r, l); err != nil {
			t.Fatal(err)
		}
	}
	desc := func(l v1.Layer) map[string]any {
		d, _ := l.Digest()
		n, _ := l.Size()
		mt, _ := l.MediaType()
		return map[string]any{"mediaType": mt, "digest": d.String(), "size": n}
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": types.OCIManifestSchema1, "artifactType": artifactType,
		"config": desc(config), "layers": []any{desc(layer)},
		"subject": map[string]any{"mediaType": subject.MediaType, "digest": subject.Digest.String(), "size": subject.Size},
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(manifest)
	if err := remote.Put(r.Digest("sha256:"+hex.EncodeToString(sum[:])), rawManifest(manifest), remote.WithReferrersTagFallback(true)); err != nil {
		t.Fatalf("pushing the referrer of %s: %v", digest, err)
	}
}

type rawManifest []byte

func (m rawManifest) RawManifest() ([]byte, error)        { return m, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
