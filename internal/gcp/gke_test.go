package gcp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
)

const (
	testCluster  = "projects/shop/locations/europe-west1/clusters/prod"
	testAudience = "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/github/providers/github"
	testOIDC     = "github-oidc-token-for-gke"
)

// wif sets up Workload Identity Federation as google-github-actions/auth
// does (without a service account), and returns its environment.
func wif(t *testing.T, g *kmstest.GCP) map[string]string {
	t.Helper()
	dir := t.TempDir()
	oidc := filepath.Join(dir, "oidc")
	if err := os.WriteFile(oidc, []byte(testOIDC), 0o600); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(dir, "creds.json")
	if err := os.WriteFile(creds, kmstest.ExternalAccount(testAudience, oidc, ""), 0o600); err != nil {
		t.Fatal(err)
	}
	g.AllowFederation(testAudience, testOIDC, "principal://github/repo:acme/deployments")
	return map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": creds}
}

func gkeOptions(g *kmstest.GCP, env map[string]string, cluster string, masked *[]string) GKEOptions {
	return GKEOptions{
		Options: Options{Getenv: func(k string) string { return env[k] }, HTTPClient: kmstest.Client(g), Metadata: offGoogle},
		Cluster: cluster,
		Mask:    func(tok string) { *masked = append(*masked, tok) },
	}
}

// offGoogle is a machine off Google: no DMI product name, no
// metadata.google.internal, and no metadata server at its address.
var offGoogle = Metadata{
	ProductName: func() string { return "" },
	LookupHost: func(_ context.Context, host string) ([]string, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	},
	Client: &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New("test: a request to the metadata server")
	})},
}

// The endpoint and CA come from clusters.get; the token, from the
// federated credentials, is one Google vouches for, and was masked first.
func TestGKEConfig(t *testing.T) {
	g := kmstest.NewGCP(t)
	env := wif(t, g)
	g.AddCluster(testCluster, "10.1.2.3:443", []byte("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"))
	var masked []string
	cfg, err := GKEConfig(context.Background(), gkeOptions(g, env, testCluster, &masked))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://10.1.2.3:443" || !strings.Contains(string(cfg.TLSClientConfig.CAData), "CA") {
		t.Errorf("host %q CA %q", cfg.Host, cfg.TLSClientConfig.CAData)
	}
	// The token the client sends.
	var sent string
	rt := cfg.WrapTransport(roundTripper(func(r *http.Request) (*http.Response, error) {
		sent = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	}))
	req, _ := http.NewRequest(http.MethodGet, cfg.Host+"/version", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if p, ok := g.Principal(sent); !ok || p != "principal://github/repo:acme/deployments" {
		t.Errorf("the token sent belongs to %q (%v)", p, ok)
	}
	if len(masked) == 0 || masked[0] != sent {
		t.Error("the token was not masked before use")
	}
	if n := g.Count("GKE.GetCluster"); n != 1 {
		t.Errorf("%d clusters.get", n)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestGKEConfigErrors(t *testing.T) {
	g := kmstest.NewGCP(t)
	env := wif(t, g)
	refused := map[string]string{"GOOGLE_OAUTH_ACCESS_TOKEN": "ya29.not-a-token-google-knows"}
	tests := []struct {
		name, cluster string
		env           map[string]string
		want          string
	}{
		{"bad name", "prod", env, `GKE cluster "prod": want projects/PROJECT/locations/LOCATION/clusters/NAME`},
		{"no credentials", testCluster, nil, "GKE cluster " + testCluster + ": no Google credentials"},
		{"unknown cluster", testCluster, env, "GKE cluster " + testCluster + ": clusters.get: Google 404 NOT_FOUND: Not found: " + testCluster},
		{"token refused", testCluster, refused, "clusters.get: Google 401 UNAUTHENTICATED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var masked []string
			_, err := GKEConfig(context.Background(), gkeOptions(g, tt.env, tt.cluster, &masked))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "not-a-token") {
				t.Error("the error quotes the token")
			}
		})
	}
	// The OIDC token is one the provider does not trust.
	if err := os.WriteFile(strings.TrimSuffix(env["GOOGLE_APPLICATION_CREDENTIALS"], "creds.json")+"oidc", []byte("another-repository"), 0o600); err != nil {
		t.Fatal(err)
	}
	var masked []string
	_, err := GKEConfig(context.Background(), gkeOptions(g, env, testCluster, &masked))
	if err == nil || !strings.Contains(err.Error(), "no token from GOOGLE_APPLICATION_CREDENTIALS (external_account): invalid_grant") || strings.Contains(err.Error(), "another-repository") {
		t.Errorf("err = %v", err)
	}
}

// gcloud's endpoint override sends clusters.get elsewhere (here, a host
// nobody serves).
func TestGKEConfigEndpointOverride(t *testing.T) {
	g := kmstest.NewGCP(t)
	env := wif(t, g)
	env[ContainerEndpointEnv] = "https://psc-container.p.googleapis.example/"
	g.AddCluster(testCluster, "10.1.2.3", []byte("CA"))
	var masked []string
	_, err := GKEConfig(context.Background(), gkeOptions(g, env, testCluster, &masked))
	if err == nil || !strings.Contains(err.Error(), "psc-container.p.googleapis.example") {
		t.Fatalf("err = %v", err)
	}
	if n := g.Count("GKE.GetCluster"); n != 0 {
		t.Errorf("%d clusters.get at the default endpoint", n)
	}
}

// The credentials file as google-github-actions/auth writes it: the OIDC
// token comes from the job's ID token endpoint (the request token in a
// header), for the provider's audience, and is exchanged at STS; with a
// service account, impersonated. Neither token shows in an error.
func TestGKEConfigGitHubOIDC(t *testing.T) {
	g := kmstest.NewGCP(t)
	gh := kmstest.NewGitHubOIDC(t)
	oidcAudience := "https://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/github/providers/github"
	g.AllowFederation(testAudience, gh.TokenFor(oidcAudience), "principal://github/repo:acme/deployments")
	g.AllowImpersonation("deployer@shop.iam.gserviceaccount.com", "principal://github/repo:acme/deployments")
	g.AddCluster(testCluster, "10.1.2.3", []byte("CA"))
	for _, sa := range []string{"", "deployer@shop.iam.gserviceaccount.com"} {
		creds := filepath.Join(t.TempDir(), "gha-creds-1234.json")
		if err := os.WriteFile(creds, kmstest.ExternalAccountFromGitHub(testAudience, gh, oidcAudience, sa), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": creds}
		var masked []string
		opts := gkeOptions(g, env, testCluster, &masked)
		opts.HTTPClient = kmstest.Client(g, gh)
		if _, err := GKEConfig(context.Background(), opts); err != nil {
			t.Fatalf("service account %q: %v", sa, err)
		}
		want := "principal://github/repo:acme/deployments"
		if sa != "" {
			want = "serviceAccount:" + sa
		}
		reqs := g.Requests()
		if last := reqs[len(reqs)-1]; last.Target != "GKE.GetCluster" || last.Principal != want {
			t.Errorf("clusters.get by %+v, want %s", last, want)
		}
	}
	if reqs := gh.Requests(); len(reqs) != 2 || reqs[0].Key != oidcAudience {
		t.Errorf("GitHub OIDC requests %+v", reqs)
	}

	// A request token GitHub refuses.
	bad := strings.ReplaceAll(string(kmstest.ExternalAccountFromGitHub(testAudience, gh, oidcAudience, "")), gh.RequestToken, "not-the-request-token")
	creds := filepath.Join(t.TempDir(), "gha-creds-bad.json")
	if err := os.WriteFile(creds, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	var masked []string
	opts := gkeOptions(g, map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": creds}, testCluster, &masked)
	opts.HTTPClient = kmstest.Client(g, gh)
	_, err := GKEConfig(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "no token from GOOGLE_APPLICATION_CREDENTIALS (external_account)") || strings.Contains(err.Error(), "not-the-request-token") {
		t.Errorf("err = %v", err)
	}
}

// A self-hosted runner in a GKE pod with Workload Identity (or on a GCE
// VM): no credentials in the environment, the metadata server answers
// for the Google service account bound to the pod's. clusters.get and the
// API server get the token the metadata server issued, masked first; the
// scopes asked for are gke-gcloud-auth-plugin's.
func TestGKEConfigMetadataServer(t *testing.T) {
	g := kmstest.NewGCP(t)
	meta := kmstest.NewGCEMetadata(t, g, "deployer@shop.iam.gserviceaccount.com")
	g.AddCluster(testCluster, "10.1.2.3", []byte("CA"))
	env := map[string]string{"HOME": t.TempDir(), "GCE_METADATA_HOST": meta.Host()}
	var masked []string
	opts := gkeOptions(g, env, testCluster, &masked)
	opts.Metadata = Metadata{} // GCE_METADATA_HOST's server is reached directly
	cfg, err := GKEConfig(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := g.Requests()
	if last := reqs[len(reqs)-1]; last.Target != "GKE.GetCluster" || last.Principal != "serviceAccount:deployer@shop.iam.gserviceaccount.com" {
		t.Errorf("clusters.get by %+v", last)
	}
	var sent string
	rt := cfg.WrapTransport(roundTripper(func(r *http.Request) (*http.Response, error) {
		sent = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	}))
	req, _ := http.NewRequest(http.MethodGet, cfg.Host+"/version", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if p, ok := g.Principal(sent); !ok || p != "serviceAccount:deployer@shop.iam.gserviceaccount.com" {
		t.Errorf("the token sent belongs to %q (%v)", p, ok)
	}
	if len(masked) == 0 || masked[0] != sent {
		t.Error("the token was not masked before use")
	}
	tokens := 0
	for _, r := range meta.Requests() {
		if r.Target == "Metadata.Token" {
			tokens++
			if r.Key != CloudPlatformScope+",https://www.googleapis.com/auth/userinfo.email" {
				t.Errorf("scopes %q", r.Key)
			}
		}
	}
	if tokens != 1 {
		t.Errorf("%d tokens from the metadata server, want 1 (reused)", tokens)
	}
}

// A metadata server that has no service account for the machine, or
// refuses the request, fails with its answer and how it was found.
func TestGKEConfigMetadataServerErrors(t *testing.T) {
	g := kmstest.NewGCP(t)
	noAccount := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Metadata-Flavor", "Google")
		http.Error(w, "Not Found", http.StatusNotFound)
	}))
	defer noAccount.Close()
	host := strings.TrimPrefix(noAccount.URL, "http://")
	var masked []string
	opts := gkeOptions(g, map[string]string{"GCE_METADATA_HOST": host}, testCluster, &masked)
	opts.Metadata = Metadata{}
	_, err := GKEConfig(context.Background(), opts)
	want := "GKE cluster " + testCluster + ": the metadata server (GCE_METADATA_HOST=" + host + "): " + host + " answered 404 Not Found: Not Found (the machine has no service account)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
}
