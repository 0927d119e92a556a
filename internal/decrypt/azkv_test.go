package decrypt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// The Azure Key Vault tests talk to an Azure double (kmstest.Azure)
// through sops's azkv key source, Azure's SDK and Entra ID's token
// endpoint (MSAL), over HTTPS under Azure's host names. Fixtures are
// encrypted by an admin application allowed on the key; decryption runs
// with the credentials a test puts in the environment it passes.
const (
	azureDeployer   = "11111111-2222-3333-4444-555555555555"
	azureOIDCToken  = "eyJhbGciOiJSUzI1NiJ9.github-oidc-token-for-azure.sig"
	azureSecretApp  = "66666666-7777-8888-9999-000000000000"
	azureAppSecret  = "azure-client-secret~value.0123"
	azureVaultName  = "deployvault"
	azureKeyName    = "sops"
	azureAdminAppID = "admin-app"
)

type azureFixture struct {
	a   *kmstest.Azure
	url string // the key's URL, as sops records it
	// env is workload identity federation as a workflow sets it up.
	env map[string]string
}

func newAzure(t *testing.T) *azureFixture {
	t.Helper()
	a := kmstest.NewAzure(t)
	vault, version := a.CreateKey(azureVaultName, azureKeyName)
	a.AddApp(azureAdminAppID, "")
	a.AllowKey(azureVaultName, azureKeyName, azureAdminAppID)
	a.AddApp(azureDeployer, "")
	a.AllowFederated(azureDeployer, azureOIDCToken)
	a.AddApp(azureSecretApp, azureAppSecret)
	file := filepath.Join(t.TempDir(), "azure-identity-token")
	if err := os.WriteFile(file, []byte(azureOIDCToken), 0o600); err != nil {
		t.Fatal(err)
	}
	return &azureFixture{a: a, url: vault + "/keys/" + azureKeyName + "/" + version, env: map[string]string{
		"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": azureDeployer, "AZURE_FEDERATED_TOKEN_FILE": file,
	}}
}

// secret is testdata/secret.yaml encrypted for the key, as built.
func (f *azureFixture) secret(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	out, err := sopstest.EncryptGroupsWith(sopstest.Services{AzureToken: f.a.IssueToken(azureAdminAppID, kmstest.AzureVaultAudience), HTTPClient: kmstest.Client(f.a)},
		[]sopstest.KeyGroup{{AzureKV: []string{f.url}}}, 0, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex)
	if err != nil {
		t.Fatal(err)
	}
	return fromYAML(t, out)
}

func (f *azureFixture) decryptor(t *testing.T, env map[string]string) *Decryptor {
	t.Helper()
	d, err := New(Options{Getenv: func(k string) string { return env[k] }, HTTPClient: kmstest.Client(f.a)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Workload identity federation: the OIDC token in
// AZURE_FEDERATED_TOKEN_FILE for a token Key Vault takes, through its
// bearer challenge; one token for every document.
func TestAzureKVWorkloadIdentity(t *testing.T) {
	f := newAzure(t)
	f.a.AllowKey(azureVaultName, azureKeyName, azureDeployer)
	d := f.decryptor(t, f.env)
	logs := captureSopsLogs(t)
	for range 2 {
		u := f.secret(t)
		if err := decryptSecret(t, d, u); err != nil {
			t.Fatal(err)
		}
		assertDecryptedSecret(t, u)
	}
	if n := f.a.Count("Entra.Token"); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
	var decrypts int
	for _, r := range f.a.Requests() {
		if r.Target == "KeyVault.Decrypt" && r.Error == "" {
			decrypts++
			if r.Principal != azureDeployer {
				t.Errorf("Key Vault decrypted for %q", r.Principal)
			}
		}
	}
	if decrypts != 2 {
		t.Errorf("%d decrypts, want 2", decrypts)
	}
	if logs.Len() != 0 {
		t.Errorf("sops logged: %s", logs)
	}
}

func TestAzureKVClientSecret(t *testing.T) {
	f := newAzure(t)
	f.a.AllowKey(azureVaultName, azureKeyName, azureSecretApp)
	u := f.secret(t)
	env := map[string]string{"AZURE_TENANT_ID": f.a.Tenant, "AZURE_CLIENT_ID": azureSecretApp, "AZURE_CLIENT_SECRET": azureAppSecret}
	if err := decryptSecret(t, f.decryptor(t, env), u); err != nil {
		t.Fatal(err)
	}
	assertDecryptedSecret(t, u)
}

// A self-hosted runner on an Azure VM with a managed identity, asked for:
// IMDS's token for Key Vault decrypts, one token for every document
// (MSAL caches it: the package's only system-assigned identity).
func TestAzureKVManagedIdentity(t *testing.T) {
	const identity = "77777777-0000-4000-8000-vmidentity01"
	f := newAzure(t)
	f.a.AllowKey(azureVaultName, azureKeyName, identity)
	imds := kmstest.NewAzureIMDS(t, f.a, identity)
	d, err := New(Options{Getenv: func(k string) string {
		return map[string]string{"AZURE_TOKEN_CREDENTIALS": "ManagedIdentityCredential"}[k]
	}, HTTPClient: kmstest.Client(f.a, imds)})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		u := f.secret(t)
		if err := decryptSecret(t, d, u); err != nil {
			t.Fatal(err)
		}
		assertDecryptedSecret(t, u)
	}
	reqs := imds.Requests()
	if len(reqs) != 1 || reqs[0].Target != "IMDS.Token" || reqs[0].Key != kmstest.AzureVaultAudience || reqs[0].Principal != identity {
		t.Errorf("IMDS requests %+v", reqs)
	}
	for _, r := range f.a.Requests() {
		if r.Target == "KeyVault.Decrypt" && r.Principal != identity {
			t.Errorf("Key Vault decrypted for %q", r.Principal)
		}
	}
}

// After azure/login: the az CLI's session gives the Key Vault token.
func TestAzureKVAzureCLI(t *testing.T) {
	f := newAzure(t)
	f.a.AllowKey(azureVaultName, azureKeyName, azureSecretApp)
	bin := f.a.AzCLI(t, azureSecretApp, kmstest.AzureVaultAudience)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	u := f.secret(t)
	if err := decryptSecret(t, f.decryptor(t, map[string]string{"HOME": f.a.AzLoginHome(t, azureSecretApp)}), u); err != nil {
		t.Fatal(err)
	}
	assertDecryptedSecret(t, u)
	calls, err := os.ReadFile(filepath.Join(bin, "calls"))
	if err != nil || !strings.HasPrefix(string(calls), "account get-access-token -o json --resource https://vault.azure.net --tenant "+f.a.Tenant) {
		t.Errorf("az ran with %q (%v)", calls, err)
	}
}

func TestAzureKVNoCredentials(t *testing.T) {
	f := newAzure(t)
	for name, tt := range map[string]struct {
		env  map[string]string
		want string
	}{
		"nothing": {nil, "Azure Key Vault key " + f.url + ": no Azure credentials: set AZURE_TENANT_ID and AZURE_CLIENT_ID"},
		"nothing, and no az CLI session": {map[string]string{"HOME": "/nonexistent"},
			"; the az CLI: no account signed in (no " + filepath.Join("/nonexistent", ".azure", "azureProfile.json") + "))"},
		"no tenant": {map[string]string{"AZURE_CLIENT_ID": azureDeployer, "AZURE_FEDERATED_TOKEN_FILE": f.env["AZURE_FEDERATED_TOKEN_FILE"]}, "(AZURE_TENANT_ID not set)"},
	} {
		t.Run(name, func(t *testing.T) {
			err := decryptSecret(t, f.decryptor(t, tt.env), f.secret(t))
			dataKeyFailure(t, err)
			if !errors.Is(err, ErrNoCredentials) {
				t.Errorf("err = %v, want ErrNoCredentials", err)
			}
			assertContains(t, err, tt.want)
		})
	}
}

func TestAzureKVAccessDenied(t *testing.T) {
	f := newAzure(t) // the deployer may not use the key
	err := decryptSecret(t, f.decryptor(t, f.env), f.secret(t))
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrAccessDenied) {
		t.Errorf("err = %v, want ErrAccessDenied", err)
	}
	assertContains(t, err, "Azure Key Vault key "+f.url+": access denied: the workload identity (AZURE_FEDERATED_TOKEN_FILE) of application "+azureDeployer+" may not decrypt with the key",
		"Key Vault 403 Forbidden: The user, group or application 'appid="+azureDeployer+"' does not have keys decrypt permission")
}

// Entra ID refuses the credential: an OIDC token its federated
// credential does not trust, a wrong client secret.
func TestAzureKVCredentialRefused(t *testing.T) {
	f := newAzure(t)
	f.a.AllowKey(azureVaultName, azureKeyName, azureDeployer)
	f.a.AllowKey(azureVaultName, azureKeyName, azureSecretApp)
	other := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(other, []byte("eyJ.another-repository.sig"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		env  map[string]string
		want string
	}{
		"federated token": {map[string]string{"AZURE_TENANT_ID": f.a.Tenant, "AZURE_CLIENT_ID": azureDeployer, "AZURE_FEDERATED_TOKEN_FILE": other},
			"access denied: Entra ID refused the workload identity (AZURE_FEDERATED_TOKEN_FILE) of application " + azureDeployer + " (invalid_client: AADSTS70021: No matching federated identity record found for presented assertion.)"},
		"client secret": {map[string]string{"AZURE_TENANT_ID": f.a.Tenant, "AZURE_CLIENT_ID": azureSecretApp, "AZURE_CLIENT_SECRET": "wrong-secret-value"},
			"access denied: Entra ID refused the client secret (AZURE_CLIENT_SECRET) of application " + azureSecretApp + " (invalid_client: AADSTS7000215: Invalid client secret provided.)"},
	} {
		t.Run(name, func(t *testing.T) {
			err := decryptSecret(t, f.decryptor(t, tt.env), f.secret(t))
			dataKeyFailure(t, err)
			if !errors.Is(err, ErrAccessDenied) {
				t.Errorf("err = %v, want ErrAccessDenied", err)
			}
			assertContains(t, err, tt.want)
			if strings.Contains(err.Error(), "another-repository") || strings.Contains(err.Error(), "wrong-secret-value") {
				t.Error("the error quotes the credential")
			}
		})
	}
}

func TestAzureKVKeyNotFound(t *testing.T) {
	f := newAzure(t)
	f.a.AllowKey(azureVaultName, azureKeyName, azureDeployer)
	u := f.secret(t)
	f.a.DeleteKey(azureVaultName, azureKeyName)
	err := decryptSecret(t, f.decryptor(t, f.env), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrKeyNotFound) {
		t.Errorf("err = %v, want ErrKeyNotFound", err)
	}
	assertContains(t, err, "Azure Key Vault key "+f.url+": key not found (Key Vault 404 KeyNotFound: A key with (name/id) sops was not found")
}

// (Parallel: Azure's SDK retries a refused connection for seconds.)
func TestAzureKVUnreachable(t *testing.T) {
	t.Parallel()
	f := newAzure(t)
	u := f.secret(t)
	f.a.Close()
	err := decryptSecret(t, f.decryptor(t, f.env), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("err = %v, want ErrUnreachable", err)
	}
	assertContains(t, err, "Azure Key Vault key "+f.url+": key service unreachable: https://"+azureVaultName+".vault.azure.net: ", "connection refused")
}
