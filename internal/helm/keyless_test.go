package helm_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// Keyless cosign verification of charts, against a test's own Sigstore:
// a HelmRepository of type oci with chart.spec.verify (matchOIDCIdentity)
// renders the chart signed keyless by the identity (cosign v3's bundle
// referrer), and an OCIRepository chartRef with spec.verify one signed
// the v2 way; a chart signed by another identity, or carrying another
// chart's signature, fails the release by name.
func TestExpandVerifiesKeylessCharts(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	vs := ocitest.Sigstore(t)
	const issuer, me = "https://token.actions.githubusercontent.com", "https://github.com/acme/charts/.github/workflows/release.yaml@refs/heads/main"
	web := reg.Host + "/charts/web"
	v1 := reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0", AppVersion: "1.0"})
	ocitest.AttachBundle(t, vs, web, v1, v1, me, issuer)
	ocitest.KeylessSign(t, vs, web, v1, v1, me, issuer)
	v2 := reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "2.0.0", AppVersion: "2.0"})
	ocitest.AttachBundle(t, vs, web, v2, v2, "https://github.com/evil/fork/.github/workflows/x.yaml@refs/heads/main", issuer)
	ocitest.KeylessSign(t, vs, web, v2, v2, "https://github.com/evil/fork/.github/workflows/x.yaml@refs/heads/main", issuer)
	v3 := reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "3.0.0", AppVersion: "3.0"})
	ocitest.AttachBundle(t, vs, web, v3, v1, me, issuer) // tampered: v1's bundle
	ocitest.KeylessSign(t, vs, web, v3, v1, me, issuer)
	opts := helm.Options{Fetcher: &helm.Fetcher{Sigstore: ocisource.Sigstore{Root: func(context.Context) (root.TrustedMaterial, error) { return vs, nil }}}}
	verify := "provider: cosign, matchOIDCIdentity: [{issuer: \"^https://token.actions.githubusercontent.com$\", subject: \"^https://github.com/acme/\"}]"
	for _, version := range []string{"1.0.0", "2.0.0", "3.0.0"} {
		for _, docs := range [][]string{
			{repository("oci://"+reg.Host+"/charts", "  type: oci\n  insecure: true\n"),
				release("  chart:\n    spec:\n      chart: web\n      version: \"" + version + "\"\n      sourceRef: {kind: HelmRepository, name: charts}\n      verify: {" + verify + "}\n")},
			{"apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: web, namespace: apps}\nspec:\n  insecure: true\n  url: oci://" + web + "\n  ref: {tag: \"" + version + "\"}\n  verify: {" + verify + "}\n",
				release("  chartRef: {kind: OCIRepository, name: web}\n")},
		} {
			in, files := objs(t, docs...)
			out, err := helm.Expand(t.Context(), in, files, opts)
			if version == "1.0.0" {
				if err != nil || len(out.Charts) != 1 || out.Charts[0].Version != version {
					t.Errorf("%s: %v", version, err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), "HelmRelease apps/web") || !strings.Contains(err.Error(), "no matching signatures") {
				t.Errorf("%s: %v, want no matching signatures", version, err)
			}
		}
	}
}

// chart.spec.verify on a chart of an HTTP HelmRepository is refused by
// name: Flux verifies only charts from OCI registries.
func TestExpandRefusesVerifyOfHTTPCharts(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0"})
	in, files := objs(t, repository(repo.URL, ""), release(webChart+"      verify: {provider: cosign}\n"))
	_, err := helm.Expand(t.Context(), in, files, helm.Options{})
	if err == nil || !strings.Contains(err.Error(), "spec.chart.spec.verify: HelmRepository apps/charts is not of type oci") {
		t.Fatalf("%v, want chart.spec.verify refused", err)
	}
}

// chart.spec.verify with a secretRef reads the public keys from the
// HelmRepository's namespace (where helm-controller makes the HelmChart):
// the chart signed by the key renders, an unsigned one fails.
func TestExpandVerifiesChartSpecWithKey(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signed := reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0", AppVersion: "1.0"})
	ocitest.CosignSign(t, reg.Host+"/charts/web", signed, signed, key)
	reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "2.0.0", AppVersion: "2.0"})
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: cosign-pub, namespace: sources}\nstringData:\n  cosign.pub: |\n" + indent(ocitest.PublicKeyPEM(t, key), "    ")
	repo := "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: sources}\nspec:\n  type: oci\n  insecure: true\n  url: oci://" + reg.Host + "/charts\n"
	for version, want := range map[string]string{"1.0.0": "", "2.0.0": "no cosign signature of sha256:"} {
		in, files := objs(t, secret, repo, release("  chart:\n    spec:\n      chart: web\n      version: \""+version+"\"\n      sourceRef: {kind: HelmRepository, name: charts, namespace: sources}\n      verify: {provider: cosign, secretRef: {name: cosign-pub}}\n"))
		out, err := helm.Expand(t.Context(), in, files, helm.Options{})
		if want == "" {
			if err != nil || len(out.Charts) != 1 || out.Charts[0].Version != version {
				t.Errorf("%s: %v", version, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", version, err, want)
		}
	}
}
