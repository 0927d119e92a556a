package helm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
)

// A source with provider aws logs in to its registry through
// Fetcher.AWS (an ECR token), unless its secretRef gives credentials;
// the token is masked. Other cloud providers are refused by name, and a
// provider on an HTTP repository too.
func TestExpandProviderAWS(t *testing.T) {
	const token = "ecr-token-from-aws-55"
	reg := helmtest.NewRegistryWithAuth(t, "AWS", token)
	reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0", AppVersion: "1.0"})
	var asked []string
	login := func(_ context.Context, host string) (string, string, error) {
		asked = append(asked, host)
		return "AWS", token, nil
	}
	ociRepo := func(provider string) string {
		return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: apps}\nspec:\n  type: oci\n  insecure: true\n  provider: " + provider + "\n  url: oci://" + reg.Host + "/charts\n"
	}
	ociSource := func(provider string) string {
		return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: web, namespace: apps}\nspec:\n  insecure: true\n  provider: " + provider + "\n  url: oci://" + reg.Host + "/charts/web\n  ref: {tag: 1.0.0}\n"
	}
	chartRef := release("  chartRef: {kind: OCIRepository, name: web}\n")
	for _, tc := range []struct {
		name    string
		docs    []string
		login   func(context.Context, string) (string, string, error)
		wantErr string
	}{
		{name: "HelmRepository of type oci", docs: []string{ociRepo("aws"), release(webChart)}, login: login},
		{name: "OCIRepository", docs: []string{ociSource("aws"), chartRef}, login: login},
		{name: "without a login to ECR", docs: []string{ociSource("aws"), chartRef}, wantErr: "HelmRelease apps/web (apps/web/release.yaml): OCIRepository apps/web: spec.provider aws: no AWS login configured"},
		{name: "ECR refuses", docs: []string{ociSource("aws"), chartRef},
			login: func(context.Context, string) (string, string, error) {
				return "", "", errors.New("GetAuthorizationToken: AccessDenied")
			},
			wantErr: "OCIRepository apps/web: spec.provider aws: GetAuthorizationToken: AccessDenied"},
		{name: "generic: no login, the registry refuses", docs: []string{ociSource("generic"), chartRef}, login: login, wantErr: "basic credential not found"},
		{name: "azure is refused by name", docs: []string{ociSource("azure"), chartRef}, login: login, wantErr: "spec.provider azure: this cloud provider's credentials are not supported yet (aws is"},
		{name: "gcp is refused by name", docs: []string{ociRepo("gcp"), release(webChart)}, login: login, wantErr: "spec.provider gcp: this cloud provider's credentials are not supported yet"},
		{name: "a provider on an HTTP repository", docs: []string{repository("https://charts.example.com", "  provider: aws\n"), release(webChart)}, login: login,
			wantErr: "spec.provider aws: a provider's credentials are for OCI repositories"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			in, sources := objs(t, tc.docs...)
			out, err := helm.Expand(t.Context(), in, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir(), AWS: tc.login}})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Charts) != 1 || out.Charts[0].Version != "1.0.0" {
				t.Errorf("charts %+v", out.Charts)
			}
			if !slices.Equal(asked, []string{reg.Host}) {
				t.Errorf("logged in to %q, want %q", asked, reg.Host)
			}
			if !slices.Contains(out.Secrets, token) {
				t.Errorf("the ECR token is not among the secrets to mask")
			}
		})
	}
}
