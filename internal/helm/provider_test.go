package helm_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ecr"
)

// ecrHost is an ECR registry's host, served by a test's registry (see
// reaching).
const ecrHost = "123456789012.dkr.ecr.eu-west-1.amazonaws.com"

// reaching is a client that reaches addr whatever host a request names:
// the test's registry stands in for ECR's.
func reaching(addr string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

// A source with provider aws logs in to its ECR registry through
// Fetcher.AWS (an ECR token), unless its secretRef gives credentials;
// the token is masked. A URL naming any other host is refused by name
// before a credential is minted (the token would go wherever the
// repository says). Offline, the login takes the environment's
// credentials only. gcp's and azure's logins go to their own clouds'
// registries only; other providers are refused by name, and a provider
// on an HTTP repository too.
func TestExpandProviderAWS(t *testing.T) {
	const token = "ecr-token-from-aws-55"
	reg := helmtest.NewRegistryWithAuth(t, "AWS", token)
	reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0", AppVersion: "1.0"})
	var asked []string
	var envOnly []bool
	login := func(_ context.Context, host string, o ecr.Options) (string, string, error) {
		asked, envOnly = append(asked, host), append(envOnly, o.EnvironmentOnly)
		return "AWS", token, nil
	}
	ociRepo := func(host, provider string) string {
		return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: apps}\nspec:\n  type: oci\n  insecure: true\n  provider: " + provider + "\n  url: oci://" + host + "/charts\n"
	}
	ociSource := func(host, provider string) string {
		return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: web, namespace: apps}\nspec:\n  insecure: true\n  provider: " + provider + "\n  url: oci://" + host + "/charts/web\n  ref: {tag: 1.0.0}\n"
	}
	chartRef := release("  chartRef: {kind: OCIRepository, name: web}\n")
	for _, tc := range []struct {
		name    string
		docs    []string
		login   func(context.Context, string, ecr.Options) (string, string, error)
		offline bool
		wantErr string
		asked   bool
	}{
		{name: "HelmRepository of type oci", docs: []string{ociRepo(ecrHost, "aws"), release(webChart)}, login: login, asked: true},
		{name: "OCIRepository", docs: []string{ociSource(ecrHost, "aws"), chartRef}, login: login, asked: true},
		{name: "offline: the environment's credentials only", docs: []string{ociSource(ecrHost, "aws"), chartRef}, login: login, offline: true, asked: true},
		{name: "a host that is not ECR's", docs: []string{ociSource(reg.Host, "aws"), chartRef}, login: login,
			wantErr: "OCIRepository apps/web: spec.provider aws: " + reg.Host + " is not an Amazon ECR registry"},
		{name: "a look-alike host", docs: []string{ociRepo("123456789012.dkr.ecr.eu-west-1.amazonaws.com.attacker.example", "aws"), release(webChart)}, login: login,
			wantErr: "is not an Amazon ECR registry"},
		{name: "without a login to ECR", docs: []string{ociSource(ecrHost, "aws"), chartRef}, wantErr: "HelmRelease apps/web (apps/web/release.yaml): OCIRepository apps/web: spec.provider aws: no AWS login configured"},
		{name: "ECR refuses", docs: []string{ociSource(ecrHost, "aws"), chartRef},
			login: func(context.Context, string, ecr.Options) (string, string, error) {
				return "", "", errors.New("GetAuthorizationToken: AccessDenied")
			},
			wantErr: "OCIRepository apps/web: spec.provider aws: GetAuthorizationToken: AccessDenied"},
		{name: "generic: no login, the registry refuses", docs: []string{ociSource(ecrHost, "generic"), chartRef}, login: login, wantErr: "401 Unauthorized"},
		{name: "another provider is refused by name", docs: []string{ociSource(ecrHost, "oracle"), chartRef}, login: login, wantErr: "spec.provider oracle: this cloud provider's credentials are not supported yet (aws, gcp and azure are"},
		{name: "azure: an ECR host is not Azure's", docs: []string{ociRepo(ecrHost, "azure"), release(webChart)}, login: login, wantErr: "spec.provider azure: " + ecrHost + " is not an Azure Container Registry"},
		{name: "azure: an Azure registry, no Azure login configured", docs: []string{ociRepo("fleet.azurecr.io", "azure"), release(webChart)}, login: login, wantErr: "spec.provider azure: no Azure login configured"},
		{name: "gcp: an ECR host is not Google's", docs: []string{ociRepo(ecrHost, "gcp"), release(webChart)}, login: login, wantErr: "spec.provider gcp: " + ecrHost + " is not a Google registry"},
		{name: "gcp: a Google registry, no Google login configured", docs: []string{ociRepo("europe-docker.pkg.dev", "gcp"), release(webChart)}, login: login, wantErr: "spec.provider gcp: no Google login configured"},
		{name: "a provider on an HTTP repository", docs: []string{repository("https://charts.example.com", "  provider: aws\n"), release(webChart)}, login: login,
			wantErr: "spec.provider aws: a provider's credentials are for OCI repositories"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked, envOnly = nil, nil
			in, sources := objs(t, tc.docs...)
			out, err := helm.Expand(t.Context(), in, sources, helm.Options{Offline: tc.offline, Fetcher: &helm.Fetcher{CacheDir: t.TempDir(), AWS: tc.login, Client: reaching(reg.Host)}})
			if tc.asked != (len(asked) > 0) {
				t.Errorf("logged in to %q", asked)
			}
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
			if !slices.Equal(asked, []string{ecrHost}) || !slices.Equal(envOnly, []bool{tc.offline}) {
				t.Errorf("logged in to %q (environment only: %v), want %q (%v)", asked, envOnly, ecrHost, tc.offline)
			}
			if !slices.Contains(out.Secrets, token) {
				t.Errorf("the ECR token is not among the secrets to mask")
			}
		})
	}
}

// provider gcp: a chart from Artifact Registry is pulled with a Google
// access token (Fetcher.GCP), masked; offline, the login is told to take
// the environment's credentials only.
func TestExpandProviderGCP(t *testing.T) {
	const token = "ya29.google-access-token-77"
	const garHost = "europe-docker.pkg.dev"
	reg := helmtest.NewRegistryWithAuth(t, "oauth2accesstoken", token)
	reg.Push("acme/charts", helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0", AppVersion: "1.0"})
	for _, offline := range []bool{false, true} {
		var asked []string
		var envOnly []bool
		login := func(_ context.Context, host string, e bool) (string, string, error) {
			asked, envOnly = append(asked, host), append(envOnly, e)
			return "oauth2accesstoken", token, nil
		}
		in, sources := objs(t, "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: web, namespace: apps}\nspec:\n  insecure: true\n  provider: gcp\n  url: oci://"+garHost+"/acme/charts/web\n  ref: {tag: 1.0.0}\n",
			release("  chartRef: {kind: OCIRepository, name: web}\n"))
		out, err := helm.Expand(t.Context(), in, sources, helm.Options{Offline: offline, Fetcher: &helm.Fetcher{CacheDir: t.TempDir(), GCP: login, Client: reaching(reg.Host)}})
		if err != nil {
			t.Fatalf("offline %v: %v", offline, err)
		}
		if !slices.Equal(asked, []string{garHost}) || !slices.Equal(envOnly, []bool{offline}) || !slices.Contains(out.Secrets, token) {
			t.Errorf("offline %v: logged in to %q (environment only %v); secrets to mask hold the token: %v", offline, asked, envOnly, slices.Contains(out.Secrets, token))
		}
	}
}
