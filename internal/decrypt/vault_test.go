package decrypt

import (
	"errors"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// The Vault tests talk to a Vault double (kmstest.Vault) through sops's
// hcvault key source and Vault's API client, over HTTPS under the
// double's host name. Fixtures are encrypted with an admin token allowed
// on every key; decryption runs with a "ci" token, allowed what the test
// allows.
const (
	vaultHost       = "vault.example.test"
	vaultAdminToken = "hvs.admin-token-0123456789"
	vaultCIToken    = "hvs.ci-token-abcdef0123456789"
)

func newVault(t *testing.T) (*kmstest.Vault, string) {
	t.Helper()
	// A refused connection is not retried: the test is not kept waiting.
	t.Setenv("VAULT_MAX_RETRIES", "0")
	v := kmstest.NewVault(t, vaultHost, "vault-ci.example.test")
	uri := v.CreateKey("transit", "sops")
	v.AddToken("admin", vaultAdminToken)
	v.Allow("admin", "transit", "sops")
	v.AddToken("ci", vaultCIToken)
	return v, uri
}

// secretForVault is testdata/secret.yaml encrypted for the transit key
// uri, as built.
func secretForVault(t *testing.T, v *kmstest.Vault, uri string) *unstructured.Unstructured {
	t.Helper()
	out, err := sopstest.EncryptGroupsWith(sopstest.Services{VaultToken: vaultAdminToken, HTTPClient: kmstest.Client(v)},
		[]sopstest.KeyGroup{{Vault: []string{uri}}}, 0, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex)
	if err != nil {
		t.Fatal(err)
	}
	return fromYAML(t, out)
}

func newVaultDecryptor(t *testing.T, v *kmstest.Vault, token, address string) *Decryptor {
	t.Helper()
	d, err := New(Options{VaultToken: token, VaultAddress: address, HTTPClient: kmstest.Client(v)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestVaultDecryptObjects(t *testing.T) {
	v, uri := newVault(t)
	v.Allow("ci", "transit", "sops")
	u := secretForVault(t, v, uri)
	logs := captureSopsLogs(t)
	if err := decryptSecret(t, newVaultDecryptor(t, v, vaultCIToken, ""), u); err != nil {
		t.Fatal(err)
	}
	assertDecryptedSecret(t, u)
	var byCI int
	for _, r := range v.Requests() {
		if r.Target == "Vault.Decrypt" && r.Principal == "ci" && r.Error == "" {
			byCI++
		}
	}
	if byCI != 1 {
		t.Errorf("%d decrypt requests by ci, want 1: %+v", byCI, v.Requests())
	}
	if logs.Len() != 0 {
		t.Errorf("sops logged: %s", logs)
	}
}

// VAULT_ADDR replaces the address a file records: the token goes there
// and nowhere else.
func TestVaultAddressOverride(t *testing.T) {
	v, uri := newVault(t)
	v.Allow("ci", "transit", "sops")
	u := secretForVault(t, v, uri)
	before := v.Count("Vault.Decrypt")
	d, err := New(Options{VaultToken: vaultCIToken, VaultAddress: "https://vault-ci.example.test:8200/", HTTPClient: kmstest.Client(v)})
	if err != nil {
		t.Fatal(err)
	}
	if err := decryptSecret(t, d, u); err != nil {
		t.Fatal(err)
	}
	if v.Count("Vault.Decrypt") != before+1 {
		t.Error("no decrypt request reached the override")
	}
	d = newVaultDecryptor(t, v, vaultCIToken, "https://vault-down.example.test:8200")
	err = decryptSecret(t, d, secretForVault(t, v, uri))
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("err = %v, want ErrUnreachable", err)
	}
	assertContains(t, err, "Vault transit key "+uri+": key service unreachable: https://vault-down.example.test:8200")
}

func TestVaultNoToken(t *testing.T) {
	v, uri := newVault(t)
	u := secretForVault(t, v, uri)
	before := len(v.Requests())
	err := decryptSecret(t, newVaultDecryptor(t, v, "", ""), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrNoCredentials) {
		t.Errorf("err = %v, want ErrNoCredentials", err)
	}
	assertContains(t, err, "Vault transit key "+uri+": no Vault token (set VAULT_TOKEN)")
	if len(v.Requests()) != before {
		t.Error("a request went to Vault without a token")
	}
}

func TestVaultAccessDenied(t *testing.T) {
	v, uri := newVault(t) // ci's policy does not allow the key
	for name, token := range map[string]string{"no policy": vaultCIToken, "unknown token": "hvs.unknown-token-0000"} {
		t.Run(name, func(t *testing.T) {
			err := decryptSecret(t, newVaultDecryptor(t, v, token, ""), secretForVault(t, v, uri))
			dataKeyFailure(t, err)
			if !errors.Is(err, ErrAccessDenied) {
				t.Errorf("err = %v, want ErrAccessDenied", err)
			}
			assertContains(t, err, "Vault transit key "+uri+": access denied", "Vault 403: permission denied")
			if strings.Contains(err.Error(), token) {
				t.Error("the error quotes the token")
			}
		})
	}
}

func TestVaultKeyNotFound(t *testing.T) {
	v, uri := newVault(t)
	v.Allow("ci", "transit", "sops")
	u := secretForVault(t, v, uri)
	v.DeleteKey("transit", "sops")
	err := decryptSecret(t, newVaultDecryptor(t, v, vaultCIToken, ""), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrKeyNotFound) {
		t.Errorf("err = %v, want ErrKeyNotFound", err)
	}
	assertContains(t, err, "Vault transit key "+uri+": key not found (Vault 400: encryption key not found)")
}

func TestVaultUnreachable(t *testing.T) {
	v, uri := newVault(t)
	u := secretForVault(t, v, uri)
	v.Close()
	err := decryptSecret(t, newVaultDecryptor(t, v, vaultCIToken, ""), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("err = %v, want ErrUnreachable", err)
	}
	assertContains(t, err, "key service unreachable: https://"+vaultHost+":8200", "connection refused")
}
