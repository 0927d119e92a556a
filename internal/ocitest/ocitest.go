// Package ocitest pushes Flux artifacts (as flux push artifact writes
// them) to a test's registry (helmtest.NewRegistry): for tests only.
package ocitest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Flux's media types (flux push artifact).
const (
	ContentMediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
	ConfigMediaType  = "application/vnd.cncf.flux.config.v1+json"
)

// Entry is one tar entry: a regular file (Body), or a directory, link
// or other type (Type, Link).
type Entry struct {
	Name string
	Body string
	Type byte
	Link string
	Mode int64
}

// Files are regular files by name, in name order, as entries.
func Files(files map[string]string) []Entry {
	var out []Entry
	for _, n := range slices.Sorted(maps.Keys(files)) {
		out = append(out, Entry{Name: n, Body: files[n]})
	}
	return out
}

// TarGz is entries as a tar+gzip stream.
func TarGz(t testing.TB, entries []Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Linkname: e.Link, Mode: e.Mode, ModTime: time.Unix(0, 0)}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.Body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Layer is a layer of an artifact.
type Layer struct {
	MediaType string
	Data      []byte
}

// Artifact is what to push.
type Artifact struct {
	Layers      []Layer
	Annotations map[string]string
}

// Flux is an artifact as flux push artifact writes it: one layer of
// ContentMediaType holding files, annotated with source and revision.
func Flux(t testing.TB, files map[string]string, source, revision string) Artifact {
	return Artifact{
		Layers: []Layer{{MediaType: ContentMediaType, Data: TarGz(t, Files(files))}},
		Annotations: map[string]string{
			"org.opencontainers.image.source":   source,
			"org.opencontainers.image.revision": revision,
			"org.opencontainers.image.created":  "2026-01-02T03:04:05Z",
		},
	}
}

// Push pushes a to ref (host/repository:tag) and returns the manifest's
// digest. username and password, when set, are sent; client, when set,
// reaches an HTTPS registry.
func Push(t testing.TB, ref string, a Artifact, username, password string, client *http.Client) string {
	t.Helper()
	var img v1.Image = empty.Image
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, ConfigMediaType)
	for _, l := range a.Layers {
		var err error
		if img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(l.Data, types.MediaType(l.MediaType))}); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.Annotations) > 0 {
		img = mutate.Annotations(img, a.Annotations).(v1.Image)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	opts := []remote.Option{}
	if username != "" {
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: username, Password: password}))
	}
	if client != nil {
		opts = append(opts, remote.WithTransport(client.Transport))
	}
	if err := remote.Write(r, img, opts...); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// CosignSign pushes, for the artifact of digest in repository repo
// (host/path), the signature cosign sign --key writes: tag
// sha256-<hex>.sig, one layer of the simple-signing payload naming
// payloadDigest (the artifact's own, unless a test forges another),
// signed with key (ECDSA over its SHA-256).
func CosignSign(t testing.TB, repo, digest, payloadDigest string, key *ecdsa.PrivateKey) {
	t.Helper()
	payload := []byte(`{"critical":{"identity":{"docker-reference":"` + repo + `"},"image":{"docker-manifest-digest":"` + payloadDigest + `"},"type":"cosign container image signature"},"optional":null}`)
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	layer := static.NewLayer(payload, "application/vnd.dev.cosign.simplesigning.v1+json")
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{Layer: layer,
		Annotations: map[string]string{"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sig)}})
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

// PublicKeyPEM is key's public half as cosign.pub holds it.
func PublicKeyPEM(t testing.TB, key *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}
