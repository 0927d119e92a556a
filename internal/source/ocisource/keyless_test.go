package ocisource_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

const (
	issuer   = "https://token.actions.githubusercontent.com"
	identity = "https://github.com/acme/fleet/.github/workflows/push.yaml@refs/heads/main"
)

// trust is vs as the trusted root: a test's own Sigstore, whose Fulcio
// embeds no SCTs.
func trust(tm root.TrustedMaterial) ocisource.Sigstore {
	return ocisource.Sigstore{Root: func(context.Context) (root.TrustedMaterial, error) { return tm, nil }}
}

// spec.verify (provider cosign, keyless): an artifact signed keyless by a
// matching identity is pulled, whether cosign v2 wrote the signature
// (its .sig tag) or cosign v3 (a Sigstore bundle referrer); one unsigned,
// signed by another identity, by another Sigstore, with a key, or
// carrying another artifact's signature is refused with nothing
// extracted.
func TestPullVerifiesKeylessSignatures(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	repo := reg.Host + "/manifests/app"
	vs, other := ocitest.Sigstore(t), ocitest.Sigstore(t)
	push := func(tag string) string {
		return ocitest.Push(t, repo+":"+tag, ocitest.Flux(t, map[string]string{"cm.yaml": tag}, "", ""), "", "", nil)
	}
	v2 := push("v2")
	ocitest.KeylessSign(t, vs, repo, v2, v2, identity, issuer)
	v3 := push("v3")
	ocitest.AttachBundle(t, vs, repo, v3, v3, identity, issuer)
	push("unsigned")
	stranger := push("stranger")
	ocitest.KeylessSign(t, vs, repo, stranger, stranger, "https://github.com/evil/fork/.github/workflows/x.yaml@refs/heads/main", issuer)
	strangerV3 := push("stranger-v3")
	ocitest.AttachBundle(t, vs, repo, strangerV3, strangerV3, identity, "https://accounts.google.com")
	otherCA := push("other-ca")
	ocitest.KeylessSign(t, other, repo, otherCA, otherCA, identity, issuer)
	tampered := push("tampered")
	ocitest.KeylessSign(t, vs, repo, tampered, v2, identity, issuer) // v2's payload, signed anew for this tag
	tamperedV3 := push("tampered-v3")
	ocitest.AttachBundle(t, vs, repo, tamperedV3, v3, identity, issuer) // a bundle whose subject is v3
	keyed := push("keyed")
	key := newKey(t)
	ocitest.CosignSign(t, repo, keyed, keyed, key)

	ids := []ocisource.Identity{{Issuer: "^https://token.actions.githubusercontent.com$", Subject: "^https://github.com/acme/fleet/"}}
	for _, tc := range []struct {
		tag string
		ids []ocisource.Identity
		err string
	}{
		{"v2", ids, ""},
		{"v3", ids, ""},
		{"v2", nil, ""}, // no matchOIDCIdentity: any identity
		{"v3", []ocisource.Identity{{Issuer: "gitlab", Subject: ".*"}, ids[0]}, ""},
		{"unsigned", ids, "no Sigstore bundle among its referrers, and no signature tag"},
		{"stranger", ids, "a signature that does not verify"},
		{"stranger-v3", ids, "a Sigstore bundle that does not verify"},
		{"other-ca", ids, "a signature that does not verify"},
		{"tampered", ids, "a signature of another artifact (" + v2 + ")"},
		{"tampered-v3", ids, "a Sigstore bundle that does not verify"},
		{"keyed", ids, "a signature without a certificate (signed with a key, not keyless)"},
		{"v2", []ocisource.Identity{{Issuer: issuer, Subject: "^https://github.com/acme/other/"}}, "a signature that does not verify"},
	} {
		dir := filepath.Join(t.TempDir(), "a")
		v := &ocisource.Verification{Keyless: &ocisource.Keyless{Identities: tc.ids, Sigstore: trust(vs)}}
		_, err := ocisource.Pull(t.Context(), ocisource.Options{URL: "oci://" + repo, Ref: ocisource.Ref{Tag: tc.tag}, Dir: dir, Verify: v})
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s %v: %v", tc.tag, tc.ids, err)
			}
			continue
		}
		var ve *ocisource.VerifyError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "no matching signatures") || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s %v: %v, want a *VerifyError saying %q", tc.tag, tc.ids, err, tc.err)
		}
		if _, err := os.Stat(filepath.Join(dir, "cm.yaml")); err == nil {
			t.Errorf("%s: extracted though not verified", tc.tag)
		}
	}
}

// A trusted root that cannot be had fails the pull by its reason, before
// anything is extracted.
func TestPullKeylessWithoutTrustedRoot(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	repo := reg.Host + "/manifests/app"
	ocitest.Push(t, repo+":v1", ocitest.Flux(t, map[string]string{"cm.yaml": "x"}, "", ""), "", "", nil)
	dir := filepath.Join(t.TempDir(), "a")
	down := ocisource.Sigstore{Root: func(context.Context) (root.TrustedMaterial, error) {
		return nil, errors.New("TUF repository https://tuf.example: unreachable")
	}}
	_, err := ocisource.Pull(t.Context(), ocisource.Options{URL: "oci://" + repo, Ref: ocisource.Ref{Tag: "v1"}, Dir: dir,
		Verify: &ocisource.Verification{Keyless: &ocisource.Keyless{Sigstore: down}}})
	var ve *ocisource.VerifyError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "https://tuf.example") {
		t.Fatalf("%v, want a *VerifyError naming the TUF repository", err)
	}
}

// matchOIDCIdentity entries are checked as Flux reads them: both
// expressions required, each compiling.
func TestCheckIdentities(t *testing.T) {
	for _, tc := range []struct {
		ids  []ocisource.Identity
		want string
	}{
		{[]ocisource.Identity{{Issuer: "^a$", Subject: "b"}}, ""},
		{[]ocisource.Identity{{Issuer: "a"}}, "spec.verify.matchOIDCIdentity[0].subject: required"},
		{[]ocisource.Identity{{Issuer: "a", Subject: "b"}, {Issuer: "(", Subject: "b"}}, "spec.verify.matchOIDCIdentity[1].issuer: error parsing regexp"},
	} {
		err := ocisource.CheckIdentities(tc.ids)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v, want %q", tc.ids, err, tc.want)
		}
	}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
