package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What pulling an OCIRepository takes of it is read; the fields that
// change what source-controller pulls, which a pull does not honour,
// are named.
func TestOCIRepositoryRead(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "clusters/prod")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: app, namespace: apps}
spec:
  interval: 5m
  url: oci://ghcr.io/acme/manifests/app
  ref: {semver: ">=1.0.0", semverFilter: ".*-rc", tag: latest}
  layerSelector: {mediaType: application/vnd.cncf.flux.content.v1.tar+gzip, operation: copy}
  secretRef: {name: regcred}
  insecure: true
  ignore: "*.md"
---
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata: {name: signed, namespace: apps}
spec:
  url: oci://123.dkr.ecr.eu-west-1.amazonaws.com/app
  ref: {digest: "sha256:0123"}
  provider: aws
  verify:
    provider: cosign
    matchOIDCIdentity:
    - {issuer: "^https://token.actions.githubusercontent.com$", subject: "^https://github.com/acme/.*$"}
  certSecretRef: {name: ca}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: notation, namespace: apps}
spec:
  url: oci://ghcr.io/acme/app
  verify: {provider: notation, secretRef: {name: trust}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: apps}
spec:
  interval: 10m
  sourceRef: {kind: OCIRepository, name: app}
  path: ./
  prune: true
`
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := Read(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	ignore := "*.md"
	for name, want := range map[string]struct {
		ref string
		oci OCISpec
	}{
		"app": {"semver >=1.0.0, semverFilter .*-rc, tag latest", OCISpec{SemVer: ">=1.0.0", SemVerFilter: ".*-rc", Tag: "latest",
			MediaType: "application/vnd.cncf.flux.content.v1.tar+gzip", Operation: "copy", SecretName: "regcred", Insecure: true, Ignore: &ignore}},
		"signed": {"digest sha256:0123", OCISpec{Digest: "sha256:0123", Provider: "aws", Unsupported: []string{"spec.certSecretRef"},
			Verify: &Verify{MatchOIDCIdentity: []OIDCIdentity{{Issuer: "^https://token.actions.githubusercontent.com$", Subject: "^https://github.com/acme/.*$"}}}}},
		"notation": {"", OCISpec{Unsupported: []string{"spec.verify.provider notation"}}},
	} {
		s := set.Source(OCIRepositoryKind, Ref{Namespace: "apps", Name: name})
		if s == nil || s.OCI == nil {
			t.Fatalf("%s: %+v", name, s)
		}
		if s.GitRef != want.ref {
			t.Errorf("%s: ref %q, want %q", name, s.GitRef, want.ref)
		}
		if diff := cmp.Diff(want.oci, *s.OCI); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}
