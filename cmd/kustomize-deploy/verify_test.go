package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/root"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// A Kustomization's OCIRepository with spec.verify (cosign, its public
// key in a Secret of the configuration's files): the signed artifact
// deploys; the tag moved to a tampered artifact (carrying the signed
// one's signature) fails the unit and writes nothing.
func TestConfigVerifiesSignedArtifacts(t *testing.T) {
	c := newCLI(t)
	reg := helmtest.NewRegistry(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	repoRef := reg.Host + "/manifests/app"
	cm := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: " + c.ns + "\ndata:\n  version: \"" + v + "\"\n"
	}
	signed := ocitest.Push(t, repoRef+":stable", ocitest.Flux(t, map[string]string{"deploy/app.yaml": cm("signed")}, "", ""), "", "", nil)
	ocitest.CosignSign(t, repoRef, signed, signed, key)

	dir := t.TempDir()
	var pub strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(ocitest.PublicKeyPEM(t, key)), "\n") {
		pub.WriteString("    " + l + "\n")
	}
	writeFile(t, filepath.Join(dir, "clusters/local/units.yaml"), `apiVersion: v1
kind: Secret
metadata:
  name: cosign-pub
  namespace: `+c.ns+`
stringData:
  cosign.pub: |
`+pub.String()+`---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: app
  namespace: `+c.ns+`
spec:
  interval: 5m
  url: oci://`+repoRef+`
  ref:
    tag: stable
  verify:
    provider: cosign
    secretRef:
      name: cosign-pub
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: `+c.ns+`
spec:
  interval: 10m
  sourceRef:
    kind: OCIRepository
    name: app
  path: ./deploy
  prune: true
`)
	initRepo(t, dir, "git@github.com:acme/fleet.git")
	config := filepath.Join(dir, "clusters/local")
	k := cluster.Client(t)
	version := func() string {
		got, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "app", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		return got.Data["version"]
	}

	o, s := c.runConfig("apply", "--config", config)
	if r := unitsByName(s)["app"]; o.code != exitOK || r == nil || r.Reason != result.ReasonApplySucceed || version() != "signed" {
		t.Fatalf("signed: exit %d %+v, version %q\n%s", o.code, r, version(), o.stderr)
	}

	tampered := ocitest.Push(t, repoRef+":stable", ocitest.Flux(t, map[string]string{"deploy/app.yaml": cm("tampered")}, "", ""), "", "", nil)
	ocitest.CosignSign(t, repoRef, tampered, signed, key)
	o, s = c.runConfig("apply", "--config", config)
	r := unitsByName(s)["app"]
	if o.code != exitFail || r == nil || r.Reason != result.ReasonArtifactFailed || len(r.Entries) != 0 {
		t.Fatalf("tampered: exit %d %+v\n%s", o.code, r, o.stderr)
	}
	contains(t, "its message", r.Message, "OCIRepository "+c.ns+"/app", "is not signed by a key of spec.verify.secretRef", "a signature of another artifact")
	if v := version(); v != "signed" {
		t.Errorf("the tampered artifact was applied: version %q", v)
	}
}

// A Kustomization's OCIRepository with spec.verify keyless (cosign,
// matchOIDCIdentity), against the test's own Sigstore: the artifact
// signed by the identity (a cosign v3 bundle referrer) deploys; the tag
// moved to an artifact signed by another identity (cosign v2's
// signature tag) fails the unit by name and writes nothing, and its
// dependent is skipped.
func TestConfigVerifiesKeylessArtifacts(t *testing.T) {
	c := newCLI(t)
	vs := ocitest.Sigstore(t)
	c.sigstore = ocisource.Sigstore{Root: func(context.Context) (root.TrustedMaterial, error) { return vs, nil }}
	reg := helmtest.NewRegistry(t)
	repoRef := reg.Host + "/manifests/app"
	const issuer = "https://token.actions.githubusercontent.com"
	cm := func(name, v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: " + c.ns + "\ndata:\n  version: \"" + v + "\"\n"
	}
	signed := ocitest.Push(t, repoRef+":stable", ocitest.Flux(t, map[string]string{"deploy/app.yaml": cm("app", "signed")}, "", ""), "", "", nil)
	ocitest.AttachBundle(t, vs, repoRef, signed, signed, "https://github.com/acme/fleet/.github/workflows/push.yaml@refs/heads/main", issuer)

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "clusters/local/units.yaml"), `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: app
  namespace: `+c.ns+`
spec:
  interval: 5m
  url: oci://`+repoRef+`
  ref:
    tag: stable
  verify:
    provider: cosign
    matchOIDCIdentity:
    - issuer: "^https://token.actions.githubusercontent.com$"
      subject: "^https://github.com/acme/fleet/"
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: `+c.ns+`
spec:
  interval: 10m
  sourceRef:
    kind: OCIRepository
    name: app
  path: ./deploy
  prune: true
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: after
  namespace: `+c.ns+`
spec:
  interval: 10m
  dependsOn:
  - name: app
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
  path: ./after
  prune: true
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m
  url: ssh://git@github.com/acme/fleet
  ref:
    branch: main
`)
	writeFile(t, filepath.Join(dir, "after/cm.yaml"), cm("after", "1"))
	initRepo(t, dir, "git@github.com:acme/fleet.git")
	config := filepath.Join(dir, "clusters/local")
	k := cluster.Client(t)
	version := func() string {
		got, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "app", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		return got.Data["version"]
	}

	o, s := c.runConfig("apply", "--config", config)
	if r := unitsByName(s)["app"]; o.code != exitOK || r == nil || r.Reason != result.ReasonApplySucceed || version() != "signed" {
		t.Fatalf("signed: exit %d %+v, version %q\n%s", o.code, r, version(), o.stderr)
	}

	forged := ocitest.Push(t, repoRef+":stable", ocitest.Flux(t, map[string]string{"deploy/app.yaml": cm("app", "forged")}, "", ""), "", "", nil)
	ocitest.KeylessSign(t, vs, repoRef, forged, forged, "https://github.com/evil/fork/.github/workflows/push.yaml@refs/heads/main", issuer)
	o, s = c.runConfig("apply", "--config", config)
	units := unitsByName(s)
	r := units["app"]
	if o.code != exitFail || r == nil || r.Reason != result.ReasonArtifactFailed || len(r.Entries) != 0 {
		t.Fatalf("forged: exit %d %+v\n%s", o.code, r, o.stderr)
	}
	contains(t, "its message", r.Message, "OCIRepository "+c.ns+"/app (", "units.yaml:1", "no matching signatures", "a signature that does not verify")
	if v := version(); v != "signed" {
		t.Errorf("the forged artifact was applied: version %q", v)
	}
	if a := units["after"]; a == nil || a.Reason != result.ReasonDependencyNotReady {
		t.Errorf("the dependent: %+v, want it skipped", a)
	}
}
