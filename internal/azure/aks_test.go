package azure

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

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

// sentToken is the bearer token cfg's transport sends to the API server.
func sentToken(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	var sent string
	rt := cfg.WrapTransport(roundTripper(func(r *http.Request) (*http.Response, error) {
		sent = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	}))
	req, _ := http.NewRequest(http.MethodGet, cfg.Host+"/version", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	return sent
}

// A self-hosted runner on an Azure VM (or in AKS, or a scale set) with a
// user-assigned managed identity, asked for: IMDS gives the tokens, for
// ARM (listClusterUserCredential, made with that token) and for AKS's
// server application (sent to the API server), each masked first. An
// identity the machine does not have fails with IMDS's answer.
func TestAKSConfigManagedIdentity(t *testing.T) {
	const identity = "11111111-0000-4000-8000-runner000001"
	a := kmstest.NewAzure(t)
	imds := kmstest.NewAzureIMDS(t, a, "", identity)
	a.AddCluster(testSubscription, "shop", "prod", "https://prod:443", []byte("CA"), identity)
	env := map[string]string{"AZURE_TOKEN_CREDENTIALS": "ManagedIdentityCredential", "AZURE_CLIENT_ID": identity}
	var masked []string
	opts := aksOptions(a, env, testSubscription+"/shop/prod", &masked)
	opts.HTTPClient = kmstest.Client(a, imds)
	cfg, err := AKSConfig(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	reqs := a.Requests()
	if last := reqs[len(reqs)-1]; last.Target != "ARM.ListClusterUserCredential" || last.Principal != identity {
		t.Errorf("listClusterUserCredential by %+v", last)
	}
	sent := sentToken(t, cfg)
	if id, aud, ok := a.Principal(sent); !ok || id != identity || aud != kmstest.AKSAudience {
		t.Errorf("the token sent is %q's for %q (%v)", id, aud, ok)
	}
	if !slices.Contains(masked, sent) {
		t.Error("the token sent was not masked")
	}
	var resources []string
	for _, r := range imds.Requests() {
		if r.Target == "IMDS.Token" && r.Principal == identity {
			resources = append(resources, r.Key)
		}
	}
	if want := []string{"https://management.azure.com", kmstest.AKSAudience}; !slices.Equal(resources, want) {
		t.Errorf("IMDS gave tokens for %q, want %q", resources, want)
	}

	env["AZURE_CLIENT_ID"] = "22222222-0000-4000-8000-notonthisvm1"
	_, err = AKSConfig(context.Background(), opts)
	if err == nil || !strings.HasSuffix(err.Error(), "no token from the user-assigned managed identity 22222222-0000-4000-8000-notonthisvm1 (AZURE_CLIENT_ID, IMDS): invalid_request: Identity not found") {
		t.Errorf("err = %v", err)
	}
	// This VM has no system-assigned identity (no test of the package
	// gets an ARM token of one: MSAL would answer from its cache).
	delete(env, "AZURE_CLIENT_ID")
	_, err = AKSConfig(context.Background(), opts)
	if err == nil || !strings.HasSuffix(err.Error(), "no token from the system-assigned managed identity (IMDS): ManagedIdentityCredential: failed to authenticate a system assigned identity: invalid_request: Identity not found") {
		t.Errorf("err = %v", err)
	}
}

// App Service, Container Apps and Functions name their managed identity
// endpoint (IDENTITY_ENDPOINT, IDENTITY_HEADER): it is used without being
// asked for. azidentity reads those variables from the process itself.
func TestAKSConfigAppServiceIdentity(t *testing.T) {
	const identity = "33333333-0000-4000-8000-appservice01"
	a := kmstest.NewAzure(t)
	imds := kmstest.NewAzureIMDS(t, a, "", identity)
	a.AddCluster(testSubscription, "shop", "prod", "https://prod:443", []byte("CA"), identity)
	env := map[string]string{"AZURE_CLIENT_ID": identity}
	for k, v := range imds.AppServiceEnv() {
		t.Setenv(k, v)
		env[k] = v
	}
	var masked []string
	opts := aksOptions(a, env, testSubscription+"/shop/prod", &masked)
	opts.HTTPClient = kmstest.Client(a, imds)
	cfg, err := AKSConfig(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if id, _, ok := a.Principal(sentToken(t, cfg)); !ok || id != identity {
		t.Errorf("the token sent is %q's (%v)", id, ok)
	}
	if n, m := imds.Count("AppService.Token"), imds.Count("IMDS.Token"); n != 2 || m != 0 {
		t.Errorf("%d tokens from App Service's endpoint, %d from IMDS; want 2 and 0", n, m)
	}
}

// A runner where azure/login signed in: the az CLI's session gives the
// tokens (az account get-access-token, for ARM and for AKS's server
// application), used as they come.
func TestAKSConfigAzureCLI(t *testing.T) {
	const app = "44444444-0000-4000-8000-azlogin00001"
	a := kmstest.NewAzure(t)
	a.AddCluster(testSubscription, "shop", "prod", "https://prod:443", []byte("CA"), app)
	bin := a.AzCLI(t, app, kmstest.AzureARMAudience, kmstest.AKSAudience)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	env := map[string]string{"HOME": a.AzLoginHome(t, app)}
	var masked []string
	cfg, err := AKSConfig(context.Background(), aksOptions(a, env, testSubscription+"/shop/prod", &masked))
	if err != nil {
		t.Fatal(err)
	}
	if id, aud, ok := a.Principal(sentToken(t, cfg)); !ok || id != app || aud != kmstest.AKSAudience {
		t.Errorf("the token sent is %q's for %q (%v)", id, aud, ok)
	}
	reqs := a.Requests()
	if last := reqs[len(reqs)-1]; last.Target != "ARM.ListClusterUserCredential" || last.Principal != app {
		t.Errorf("listClusterUserCredential by %+v", last)
	}
	calls, err := os.ReadFile(filepath.Join(bin, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "account get-access-token -o json --resource https://management.azure.com\naccount get-access-token -o json --resource " + kmstest.AKSAudience + "\n"; string(calls) != want {
		t.Errorf("az ran with\n%s\nwant\n%s", calls, want)
	}

	// Signed out (az logout empties the list): the az CLI is not run.
	if err := os.WriteFile(filepath.Join(env["HOME"], ".azure", "azureProfile.json"), []byte(`{"subscriptions": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = AKSConfig(context.Background(), aksOptions(a, env, testSubscription+"/shop/prod", &masked))
	if err == nil || !strings.Contains(err.Error(), "the az CLI: no account signed in ("+filepath.Join(env["HOME"], ".azure", "azureProfile.json")+" lists none)") {
		t.Errorf("err = %v", err)
	}
	// Asked for, it runs, and says why it has no token: az's message.
	env["AZURE_TOKEN_CREDENTIALS"] = "AzureCLICredential"
	a.AddCluster(testSubscription, "shop", "other", "https://other:443", []byte("CA"), app)
	bin = a.AzCLI(t, app) // a token for no resource
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, err = AKSConfig(context.Background(), aksOptions(a, env, testSubscription+"/shop/other", &masked))
	if err == nil || !strings.Contains(err.Error(), "no token from the az CLI session (az account get-access-token): AzureCLICredential: ERROR: AADSTS500011") {
		t.Errorf("err = %v", err)
	}
}

// Without credentials, or with a user-assigned identity's client ID but
// no ask for IMDS, nothing is sent anywhere: not to 169.254.169.254, not
// to Entra ID.
func TestAKSConfigProbesNothingUnasked(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"nothing":           {"HOME": t.TempDir()},
		"a client ID alone": {"AZURE_CLIENT_ID": "55555555-0000-4000-8000-useridentity", "HOME": t.TempDir()},
	} {
		t.Run(name, func(t *testing.T) {
			opts := AKSOptions{
				Options: Options{Getenv: func(k string) string { return env[k] }, HTTPClient: &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
					t.Errorf("a request: %s %s", r.Method, r.URL)
					return nil, errors.New("no network here")
				})}},
				Cluster: testSubscription + "/shop/prod",
			}
			_, err := AKSConfig(context.Background(), opts)
			if !errors.Is(err, ErrNoCredentials) || !strings.Contains(err.Error(), "managed identity: no IDENTITY_ENDPOINT or MSI_ENDPOINT, and IMDS is asked for only with AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential") {
				t.Errorf("err = %v", err)
			}
		})
	}
}
