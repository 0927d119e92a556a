package source

import (
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
)

// A mapped source whose spec.verify asks for a signature is not verified:
// the directory stands in for the pull or fetch. The run says so, once,
// worded by what the source feeds (a Kustomization's manifests, a
// HelmRelease's chart); a source that asks for none is not warned of.
func TestMappedSourceSaysItsSignatureWasNotChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ref := func(kind, name string) config.SourceRef {
		return config.SourceRef{Kind: kind, Namespace: "flux-system", Name: name}
	}
	set := &config.Set{Sources: []*config.Source{
		{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: "apps"}, File: "clusters/prod/apps-sync.yaml", Line: 1, URL: "oci://ghcr.io/acme/apps", OCI: &config.OCISpec{Verify: &config.Verify{SecretName: "cosign-pub"}}},
		{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: "keyless"}, File: "clusters/prod/keyless.yaml", Line: 1, URL: "oci://ghcr.io/acme/keyless", OCI: &config.OCISpec{Verify: &config.Verify{}}},
		{Kind: "OCIRepository", Ref: config.Ref{Namespace: "flux-system", Name: "plain"}, File: "clusters/prod/plain.yaml", Line: 1, URL: "oci://ghcr.io/acme/plain", OCI: &config.OCISpec{}},
		{Kind: "GitRepository", Ref: config.Ref{Namespace: "flux-system", Name: "charts"}, File: "clusters/prod/charts.yaml", Line: 4, URL: "https://github.com/acme/charts", Git: &config.GitSpec{Unsupported: []string{"spec.verify"}}},
	}}
	r := &Resolver{set: set, root: t.TempDir(), mapped: map[config.SourceRef]string{
		ref("OCIRepository", "apps"): dir, ref("OCIRepository", "keyless"): dir, ref("OCIRepository", "plain"): dir, ref("GitRepository", "charts"): dir,
	}}
	for _, name := range []string{"apps", "apps", "keyless", "plain"} {
		u := &config.Unit{Ref: config.Ref{Namespace: "flux-system", Name: name}, Source: ref("OCIRepository", name), File: "clusters/prod/x.yaml", Line: 1}
		if _, err := r.Resolve(t.Context(), u); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := r.ChartTree(t.Context(), ref("GitRepository", "charts"))
	if err != nil {
		t.Fatal(err)
	}
	warnings := r.Warnings()
	want := []string{
		"OCIRepository/flux-system/apps (clusters/prod/apps-sync.yaml:1): spec.verify is not checked: the source is mapped to " + dir + ", which stands in for the pull that would verify it; the manifests of the Kustomizations naming it are built from " + dir + " as it is",
		"OCIRepository/flux-system/keyless (clusters/prod/keyless.yaml:1): spec.verify is not checked: the source is mapped to " + dir + ", which stands in for the pull that would verify it; the manifests of the Kustomizations naming it are built from " + dir + " as it is",
		"GitRepository/flux-system/charts (clusters/prod/charts.yaml:4): spec.verify is not checked: the source is mapped to " + dir + ", which stands in for the fetch that would verify it; the charts of the HelmReleases naming it are rendered from " + dir + " as it is",
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	if len(tree.Notes) != 1 || tree.Notes[0] != want[2] {
		t.Errorf("the chart's tree notes %q", tree.Notes)
	}
}
