package azure

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
)

const (
	testSubscription = "00000000-1111-2222-3333-444444444444"
	testApp          = "deployer-app"
)

func aksEnv(t *testing.T, a *kmstest.Azure) map[string]string {
	t.Helper()
	a.AddApp(testApp, "")
	a.AllowFederated(testApp, "github-oidc-token-for-aks")
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("github-oidc-token-for-aks"), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": testApp, "AZURE_FEDERATED_TOKEN_FILE": file}
}

func aksOptions(a *kmstest.Azure, env map[string]string, cluster string, masked *[]string) AKSOptions {
	return AKSOptions{
		Options: Options{Getenv: func(k string) string { return env[k] }, HTTPClient: kmstest.Client(a)},
		Cluster: cluster,
		Mask:    func(tok string) { *masked = append(*masked, tok) },
	}
}

func TestClusterID(t *testing.T) {
	id, name, err := ClusterID("sub/rg/prod")
	if err != nil || id != kmstest.AKSClusterID("sub", "rg", "prod") || name != "prod" {
		t.Errorf("%q %q %v", id, name, err)
	}
	full := "/subscriptions/sub/resourcegroups/rg/providers/Microsoft.ContainerService/managedClusters/prod"
	if id, name, err := ClusterID(full); err != nil || id != full || name != "prod" {
		t.Errorf("%q %q %v", id, name, err)
	}
	// As the portal's "copy resource ID" without its slash.
	if id, name, err := ClusterID(full[1:]); err != nil || id != full || name != "prod" {
		t.Errorf("%q %q %v", id, name, err)
	}
	if _, _, err := ClusterID("rg/prod"); err == nil || !strings.Contains(err.Error(), "want SUBSCRIPTION/RESOURCE_GROUP/NAME") {
		t.Errorf("err = %v", err)
	}
}

// The API server and CA come from listClusterUserCredential's kubeconfig
// (its kubelogin user ignored); the token, for AKS's server application,
// is one Entra ID issued to the workload identity, masked first.
func TestAKSConfig(t *testing.T) {
	a := kmstest.NewAzure(t)
	env := aksEnv(t, a)
	a.AddCluster(testSubscription, "shop", "prod", "https://prod-dns.hcp.westeurope.azmk8s.io:443", []byte("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"), testApp)
	var masked []string
	cfg, err := AKSConfig(context.Background(), aksOptions(a, env, testSubscription+"/shop/prod", &masked))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://prod-dns.hcp.westeurope.azmk8s.io:443" || !strings.Contains(string(cfg.TLSClientConfig.CAData), "CA") || cfg.ExecProvider != nil {
		t.Errorf("config %+v", cfg)
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
	if id, aud, ok := a.Principal(sent); !ok || id != testApp || aud != kmstest.AKSAudience {
		t.Errorf("the token sent is %q's for %q (%v)", id, aud, ok)
	}
	found := false
	for _, m := range masked {
		found = found || m == sent
	}
	if !found || len(masked) < 2 {
		t.Errorf("%d tokens masked; the one sent among them: %v", len(masked), found)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestAKSConfigErrors(t *testing.T) {
	a := kmstest.NewAzure(t)
	env := aksEnv(t, a)
	a.AddCluster(testSubscription, "shop", "prod", "https://prod:443", []byte("CA")) // nobody may list its credentials
	wrong := map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": testApp, "AZURE_CLIENT_SECRET": "not-the-secret"}
	tests := []struct {
		name, cluster string
		env           map[string]string
		want          string
	}{
		{"bad ID", "shop/prod", env, `AKS cluster "shop/prod": want SUBSCRIPTION/RESOURCE_GROUP/NAME`},
		{"no credentials", testSubscription + "/shop/prod", nil, "AKS cluster " + testSubscription + "/shop/prod: no Azure credentials"},
		{"unknown cluster", testSubscription + "/shop/staging", env, "listClusterUserCredential: ARM 404 ResourceNotFound: The Resource 'Microsoft.ContainerService/managedClusters/staging' was not found."},
		{"not allowed", testSubscription + "/shop/prod", env, "listClusterUserCredential: ARM 403 AuthorizationFailed"},
		{"secret refused", testSubscription + "/shop/prod", wrong, "no token from the client secret (AZURE_CLIENT_SECRET) of application " + testApp + ": invalid_client: AADSTS7000215"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var masked []string
			_, err := AKSConfig(context.Background(), aksOptions(a, tt.env, tt.cluster, &masked))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "not-the-secret") {
				t.Error("the error quotes the secret")
			}
		})
	}
}

// A cluster with local accounts hands out a static credential, not
// kubelogin's: it is not used, and the error says what to do instead,
// without quoting the kubeconfig.
func TestAKSConfigLocalAccounts(t *testing.T) {
	a := kmstest.NewAzure(t)
	env := aksEnv(t, a)
	a.AddCluster(testSubscription, "shop", "legacy", "https://legacy:443", []byte("CA"), testApp)
	a.UseLocalAccounts(testSubscription, "shop", "legacy")
	var masked []string
	_, err := AKSConfig(context.Background(), aksOptions(a, env, testSubscription+"/shop/legacy", &masked))
	if err == nil || !strings.Contains(err.Error(), "does not use Microsoft Entra ID authentication") || strings.Contains(err.Error(), kmstest.AKSLocalToken) {
		t.Errorf("err = %v", err)
	}
}

// AZURE_RESOURCE_MANAGER_ENDPOINT sends listClusterUserCredential to
// another cloud's ARM, with a token for it.
func TestAKSConfigARMEndpoint(t *testing.T) {
	a := kmstest.NewAzure(t)
	env := aksEnv(t, a)
	env[ARMEndpointEnv] = "https://management.usgovcloudapi.net/"
	var masked []string
	_, err := AKSConfig(context.Background(), aksOptions(a, env, testSubscription+"/shop/prod", &masked))
	if err == nil || !strings.Contains(err.Error(), "management.usgovcloudapi.net") {
		t.Fatalf("err = %v", err)
	}
	var audiences []string
	for _, r := range a.Requests() {
		if r.Target == "Entra.Token" {
			audiences = append(audiences, r.Key)
		}
	}
	if len(audiences) != 1 || audiences[0] != "https://management.usgovcloudapi.net" {
		t.Errorf("tokens asked for %v", audiences)
	}
}
