package ocisource_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// spec.verify (provider cosign, a key): an artifact signed by the key is
// pulled; one unsigned, signed by another key, or carrying another
// artifact's signature (tampered) is refused with nothing extracted.
func TestPullVerifiesCosignSignatures(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	repo := reg.Host + "/manifests/app"
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signed := ocitest.Push(t, repo+":signed", ocitest.Flux(t, map[string]string{"cm.yaml": "signed"}, "", ""), "", "", nil)
	ocitest.CosignSign(t, repo, signed, signed, key)
	ocitest.Push(t, repo+":unsigned", ocitest.Flux(t, map[string]string{"cm.yaml": "unsigned"}, "", ""), "", "", nil)
	byOther := ocitest.Push(t, repo+":other", ocitest.Flux(t, map[string]string{"cm.yaml": "other"}, "", ""), "", "", nil)
	ocitest.CosignSign(t, repo, byOther, byOther, other)
	tampered := ocitest.Push(t, repo+":tampered", ocitest.Flux(t, map[string]string{"cm.yaml": "tampered"}, "", ""), "", "", nil)
	ocitest.CosignSign(t, repo, tampered, signed, key) // the signed artifact's signature, copied over

	keys, err := ocisource.ParseKeys(map[string]string{"cosign.pub": ocitest.PublicKeyPEM(t, key)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tag, err string
	}{
		{"signed", ""},
		{"unsigned", "no cosign signature of sha256:"},
		{"other", "a signature no key of spec.verify.secretRef verifies"},
		{"tampered", "a signature of another artifact (" + signed + ")"},
	} {
		dir := filepath.Join(t.TempDir(), "a")
		_, err := ocisource.Pull(t.Context(), ocisource.Options{URL: "oci://" + repo, Ref: ocisource.Ref{Tag: tc.tag}, Dir: dir, Verify: &ocisource.Verification{Keys: keys}})
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.tag, err)
			}
			continue
		}
		var ve *ocisource.VerifyError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want a *VerifyError saying %q", tc.tag, err, tc.err)
		}
		if _, err := os.Stat(filepath.Join(dir, "cm.yaml")); err == nil {
			t.Errorf("%s: extracted though not verified", tc.tag)
		}
	}
	if _, err := ocisource.ParseKeys(map[string]string{"cosign.pub": "not a key"}); err == nil {
		t.Error("a Secret without a key parses")
	}
}
