package kmstest_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

const plainYAML = "password: kmstest-plaintext\n"

// encrypt encrypts plainYAML for one key group through sops's key sources.
func encrypt(svc sopstest.Services, g sopstest.KeyGroup) ([]byte, error) {
	return sopstest.EncryptGroupsWith(svc, []sopstest.KeyGroup{g}, 0, []byte(plainYAML), formats.Yaml, "")
}

// A host no double serves is refused by the client, before any DNS.
func TestClientReachesOnlyDoubles(t *testing.T) {
	v := kmstest.NewVault(t, "vault.example.test")
	_, err := kmstest.Client(v).Get("https://example.com/")
	if err == nil || !strings.Contains(err.Error(), "lookup example.com: no such host (kmstest: no double serves it)") {
		t.Fatalf("err = %v", err)
	}
}

func TestVaultTransit(t *testing.T) {
	v := kmstest.NewVault(t, "vault.example.test")
	uri := v.CreateKey("transit", "sops")
	v.AddToken("admin", "hvs.admin-token")
	v.Allow("admin", "transit", "sops")
	v.AddToken("other", "hvs.other-token")
	svc := sopstest.Services{VaultToken: "hvs.admin-token", HTTPClient: kmstest.Client(v)}
	out, err := encrypt(svc, sopstest.KeyGroup{Vault: []string{uri}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "vault:v1:") || !strings.Contains(string(out), "vault_address: https://vault.example.test:8200") {
		t.Errorf("encrypted:\n%s", out)
	}
	svc.VaultToken = "hvs.other-token"
	if _, err := encrypt(svc, sopstest.KeyGroup{Vault: []string{uri}}); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a token without the policy: %v", err)
	}
	if n := v.Count("Vault.Encrypt"); n != 2 {
		t.Errorf("%d encrypt requests, want 2", n)
	}
}

// Google's own credential code gets tokens from the double: a service
// account key's JWT grant, and Workload Identity Federation with service
// account impersonation, as google-github-actions/auth sets it up.
func TestGCPCredentialsAndKMS(t *testing.T) {
	g := kmstest.NewGCP(t)
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, kmstest.Client(g))
	const sa = "sops@kmstest.iam.gserviceaccount.com"
	creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, g.ServiceAccountKey(sa), google.ServiceAccount, google.CredentialsParams{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := creds.TokenSource.Token()
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := g.Principal(tok.AccessToken); p != "serviceAccount:"+sa {
		t.Errorf("principal %q", p)
	}

	const audience = "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/github/providers/github"
	oidc := filepath.Join(t.TempDir(), "oidc")
	if err := os.WriteFile(oidc, []byte("github-oidc-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	g.AllowFederation(audience, "github-oidc-token", "principal://github/repo:org/app")
	g.AllowImpersonation(sa, "principal://github/repo:org/app")
	wif, err := google.CredentialsFromJSONWithTypeAndParams(ctx, kmstest.ExternalAccount(audience, oidc, sa), google.ExternalAccount, google.CredentialsParams{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
	if err != nil {
		t.Fatal(err)
	}
	wtok, err := wif.TokenSource.Token()
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := g.Principal(wtok.AccessToken); p != "serviceAccount:"+sa {
		t.Errorf("principal %q", p)
	}

	key := g.CreateKey("ring", "sops")
	g.AllowKey(key, "serviceAccount:"+sa)
	out, err := encrypt(sopstest.Services{GoogleToken: wtok.AccessToken, HTTPClient: kmstest.Client(g)}, sopstest.KeyGroup{GCPKMS: []string{key}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "resource_id: "+key) {
		t.Errorf("encrypted:\n%s", out)
	}
	if _, err := encrypt(sopstest.Services{GoogleToken: g.IssueToken("user:nobody"), HTTPClient: kmstest.Client(g)}, sopstest.KeyGroup{GCPKMS: []string{key}}); err == nil || !strings.Contains(err.Error(), "PERMISSION_DENIED") && !strings.Contains(err.Error(), "403") {
		t.Errorf("a principal without access: %v", err)
	}
	for _, target := range []string{"OAuth2.Token", "STS.Token", "IAM.GenerateAccessToken", "KMS.Encrypt"} {
		if g.Count(target) == 0 {
			t.Errorf("no %s request", target)
		}
	}
}

func TestGCPGetCluster(t *testing.T) {
	g := kmstest.NewGCP(t)
	g.AddCluster("projects/p/locations/l/clusters/c", "127.0.0.1:6443", []byte("CA"))
	req, _ := http.NewRequest(http.MethodGet, "https://container.googleapis.com/v1/projects/p/locations/l/clusters/c", nil)
	req.Header.Set("Authorization", "Bearer "+g.IssueToken("user:me"))
	resp, err := kmstest.Client(g).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"endpoint":"127.0.0.1:6443"`) {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// azidentity's credentials (MSAL underneath) get tokens from the double,
// with a client secret and with a federated token file, and sops's Key
// Vault key source encrypts through its bearer challenge.
func TestAzureCredentialsAndKeyVault(t *testing.T) {
	a := kmstest.NewAzure(t)
	opts := azcore.ClientOptions{Transport: kmstest.Client(a)}
	a.AddApp("app-secret", "client-secret-value")
	a.AddApp("app-wi", "")
	a.AllowFederated("app-wi", "github-oidc-token")
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("github-oidc-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret, err := azidentity.NewClientSecretCredential(a.Tenant, "app-secret", "client-secret-value", &azidentity.ClientSecretCredentialOptions{ClientOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	wi, err := azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{ClientOptions: opts, ClientID: "app-wi", TenantID: a.Tenant, TokenFilePath: file})
	if err != nil {
		t.Fatal(err)
	}
	for name, cred := range map[string]azcore.TokenCredential{"app-secret": secret, "app-wi": wi} {
		tok, err := cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{kmstest.AKSAudience + "/.default"}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if id, aud, _ := a.Principal(tok.Token); id != name || aud != kmstest.AKSAudience {
			t.Errorf("%s: token of %q for %q", name, id, aud)
		}
	}
	vtok, err := wi.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{kmstest.AzureVaultAudience + "/.default"}})
	if err != nil {
		t.Fatal(err)
	}
	vault, version := a.CreateKey("myvault", "sops")
	a.AllowKey("myvault", "sops", "app-wi")
	out, err := encrypt(sopstest.Services{AzureToken: vtok.Token, HTTPClient: kmstest.Client(a)}, sopstest.KeyGroup{AzureKV: []string{vault + "/keys/sops/" + version}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "vault_url: https://myvault.vault.azure.net") {
		t.Errorf("encrypted:\n%s", out)
	}
	if n := a.Count("KeyVault.Encrypt"); n != 1 {
		t.Errorf("%d encrypt requests", n)
	}
}

// The metadata server double answers Google's own client (oauth2/google's
// ComputeTokenSource, through cloud.google.com/go's metadata package at
// GCE_METADATA_HOST) with a token the GCP double takes.
func TestGCEMetadataWithGooglesClient(t *testing.T) {
	g := kmstest.NewGCP(t)
	meta := kmstest.NewGCEMetadata(t, g, "vm@shop.iam.gserviceaccount.com")
	t.Setenv("GCE_METADATA_HOST", meta.Host())
	tok, err := google.ComputeTokenSource("", "https://www.googleapis.com/auth/cloud-platform").Token()
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := g.Principal(tok.AccessToken); !ok || p != "serviceAccount:vm@shop.iam.gserviceaccount.com" {
		t.Errorf("token of %q (%v)", p, ok)
	}
	if reqs := meta.Requests(); len(reqs) != 1 || reqs[0].Target != "Metadata.Token" || reqs[0].Key != "https://www.googleapis.com/auth/cloud-platform" {
		t.Errorf("requests %+v", reqs)
	}
	// Without Google's header, as from a proxy or a browser: refused.
	resp, err := http.Get("http://" + meta.Host() + "/computeMetadata/v1/instance/service-accounts/default/token")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("without Metadata-Flavor: %s", resp.Status)
	}
}

// The IMDS double answers azidentity's ManagedIdentityCredential, reached
// at 169.254.169.254 through Client, with a token the Azure double takes;
// an identity the machine does not have is refused as IMDS refuses it.
func TestAzureIMDSWithAzidentity(t *testing.T) {
	a := kmstest.NewAzure(t)
	imds := kmstest.NewAzureIMDS(t, a, "", "kmstest-user-identity")
	co := azcore.ClientOptions{Transport: kmstest.Client(a, imds)}
	cred, err := azidentity.NewManagedIdentityCredential(&azidentity.ManagedIdentityCredentialOptions{ClientOptions: co, ID: azidentity.ClientID("kmstest-user-identity")})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{kmstest.AzureVaultAudience + "/.default"}})
	if err != nil {
		t.Fatal(err)
	}
	if id, aud, ok := a.Principal(tok.Token); !ok || id != "kmstest-user-identity" || aud != kmstest.AzureVaultAudience {
		t.Errorf("token of %q for %q (%v)", id, aud, ok)
	}
	cred, err = azidentity.NewManagedIdentityCredential(&azidentity.ManagedIdentityCredentialOptions{ClientOptions: co, ID: azidentity.ClientID("not-on-this-machine")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{kmstest.AzureVaultAudience + "/.default"}}); err == nil || !strings.Contains(err.Error(), "Identity not found") {
		t.Errorf("err = %v", err)
	}
	if n := imds.Count("IMDS.Token"); n != 2 {
		t.Errorf("%d IMDS requests, want 2", n)
	}
}
