package decrypt

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/leaktest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// leakScan collects what decryption produced (errors, sops's loggers)
// and scans it for the test's plaintexts and credentials, in every form
// leaktest knows, when the test ends.
type leakScan struct {
	t    *testing.T
	scan *leaktest.Scanner
}

func newLeakScan(t *testing.T) *leakScan {
	l := &leakScan{t: t, scan: &leaktest.Scanner{}}
	for _, p := range plaintexts {
		l.scan.Secret("plaintext", p)
	}
	logs := captureSopsLogs(t)
	t.Cleanup(func() {
		l.scan.Capture("all", "sops loggers", logs.String())
		l.scan.Check(t)
	})
	return l
}

// err captures err's message under mode; it must be an error.
func (l *leakScan) err(mode string, err error) {
	l.t.Helper()
	if err == nil {
		l.t.Errorf("%s: no error", mode)
		return
	}
	l.scan.Capture(mode, "error", err.Error())
	l.scan.Capture(mode, "error %+v", strings.ReplaceAll(err.Error(), "\n", " "))
}

// armorBody is an armored block without its BEGIN and END lines, which
// are not secret (and which errors may name).
func armorBody(block string) string {
	var b strings.Builder
	for line := range strings.Lines(block) {
		if !strings.HasPrefix(line, "-----") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// PGP: a private key, given in full, never shows in what decryption
// says, whether it decrypts, does not match, or is refused as given.
func TestLeakScanPGP(t *testing.T) {
	l := newLeakScan(t)
	key, other := newPGPKey(t, "deploy"), newPGPKey(t, "other")
	_, lockedBlock := protectedPGPKey(t)
	for name, v := range map[string]string{"PGP private key": key.Private, "other PGP private key": other.Private, "protected PGP private key": lockedBlock} {
		l.scan.Secret(name, armorBody(v))
	}
	u := secretForPGP(t, key)
	if err := decryptSecret(t, newPGPDecryptor(t, key.Private, other.Private), u); err != nil {
		t.Fatal(err)
	}
	l.err("wrong key", decryptSecret(t, newPGPDecryptor(t, other.Private), secretForPGP(t, key)))
	l.err("no key", decryptSecret(t, newTestDecryptor(t), secretForPGP(t, key)))
	root := t.TempDir()
	writeTree(t, root, map[string][]byte{
		"kustomization.yaml": []byte("secretGenerator:\n  - name: app\n    envs: [app.env]\n"),
		"app.env":            encryptPGP(t, []sopstest.PGPKey{key}, []sopstest.KeyGroup{{PGP: []string{key.Fingerprint}}}, readTestdata(t, "generator/app.env"), formats.Dotenv, ""),
	})
	_, err := newPGPDecryptor(t, other.Private).DecryptFiles(context.Background(), root, ".")
	l.err("file, wrong key", err)

	half := key.Private[:len(key.Private)/2]
	lines := strings.Split(key.Private, "\n")
	truncated := strings.Join(lines[:len(lines)/2], "\n") + "\n-----END PGP PRIVATE KEY BLOCK-----\n"
	for mode, in := range map[string]string{
		"no END line":       half,
		"truncated":         truncated,
		"passphrase":        lockedBlock,
		"public key":        key.Public,
		"age line after it": key.Private + "AGE-SECRET-KEY-1" + strings.TrimSpace(lines[3]),
	} {
		_, err := ParseKeys([]byte(in))
		l.err("ParseKeys: "+mode, err)
		_, err = ParsePGPKeys([]byte(in))
		l.err("ParsePGPKeys: "+mode, err)
	}
	_, err = New(Options{Keys: []string{truncated}})
	l.err("New: truncated", err)
}

// Vault: the tokens never show in what decryption says, whether Vault
// decrypts, refuses the token or the key, or cannot be reached.
func TestLeakScanVault(t *testing.T) {
	l := newLeakScan(t)
	v, uri := newVault(t)
	v.Allow("ci", "transit", "sops")
	l.scan.Secret("Vault token (ci)", vaultCIToken)
	l.scan.Secret("Vault token (admin)", vaultAdminToken)
	const unknown = "hvs.unknown-leak-token-0123"
	l.scan.Secret("Vault token (unknown)", unknown)
	if err := decryptSecret(t, newVaultDecryptor(t, v, vaultCIToken, ""), secretForVault(t, v, uri)); err != nil {
		t.Fatal(err)
	}
	l.err("unknown token", decryptSecret(t, newVaultDecryptor(t, v, unknown, ""), secretForVault(t, v, uri)))
	l.err("no token", decryptSecret(t, newVaultDecryptor(t, v, "", ""), secretForVault(t, v, uri)))
	l.err("elsewhere", decryptSecret(t, newVaultDecryptor(t, v, vaultCIToken, "https://vault-down.example.test"), secretForVault(t, v, uri)))
	u := secretForVault(t, v, uri)
	v.DeleteKey("transit", "sops")
	l.err("key deleted", decryptSecret(t, newVaultDecryptor(t, v, vaultCIToken, ""), u))
	u = secretForVaultAfter(t, v)
	v.Close()
	l.err("down", decryptSecret(t, newVaultDecryptor(t, v, vaultCIToken, ""), u))
}

// secretForVaultAfter recreates the key and encrypts for it again.
func secretForVaultAfter(t *testing.T, v *kmstest.Vault) *unstructured.Unstructured {
	t.Helper()
	uri := v.CreateKey("transit", "sops")
	return secretForVault(t, v, uri)
}

// GCP KMS: the OIDC token, a service account's private key and access
// tokens never show in what decryption says, whether it decrypts, has no
// credentials, is refused, or cannot reach Google.
func TestLeakScanGCPKMS(t *testing.T) {
	l := newLeakScan(t)
	f := newGCP(t)
	f.g.AllowKey(f.key, "serviceAccount:"+gcpServiceAccount)
	saKey := f.g.ServiceAccountKey(gcpServiceAccount)
	var sa struct {
		PrivateKey string `json:"private_key"`
	}
	if err := json.Unmarshal(saKey, &sa); err != nil {
		t.Fatal(err)
	}
	token := f.g.IssueToken("user:nobody")
	l.scan.Secret("OIDC token", gcpOIDCToken)
	l.scan.Secret("service account private key", armorBody(sa.PrivateKey))
	l.scan.Secret("access token", token)
	if err := decryptSecret(t, f.decryptor(t, f.env), f.secret(t)); err != nil {
		t.Fatal(err)
	}
	if err := decryptSecret(t, f.decryptor(t, map[string]string{"GOOGLE_CREDENTIALS": string(saKey)}), f.secret(t)); err != nil {
		t.Fatal(err)
	}
	l.err("no credentials", decryptSecret(t, f.decryptor(t, nil), f.secret(t)))
	l.err("token denied", decryptSecret(t, f.decryptor(t, map[string]string{"GOOGLE_OAUTH_ACCESS_TOKEN": token}), f.secret(t)))
	l.err("unknown token", decryptSecret(t, f.decryptor(t, map[string]string{"GOOGLE_OAUTH_ACCESS_TOKEN": "ya29.unknown-" + token[13:]}), f.secret(t)))
	l.err("truncated key file", decryptSecret(t, f.decryptor(t, map[string]string{"GOOGLE_CREDENTIALS": string(saKey[:len(saKey)/2])}), f.secret(t)))
	broken := strings.Replace(string(saKey), `"private_key":"-----BEGIN PRIVATE KEY-----\n`, `"private_key":"-----BEGIN PRIVATE KEY-----\nXX`, 1)
	l.err("broken private key", decryptSecret(t, f.decryptor(t, map[string]string{"GOOGLE_CREDENTIALS": broken}), f.secret(t)))
	u := f.secret(t)
	f.g.DeleteKey(f.key)
	l.err("key deleted", decryptSecret(t, f.decryptor(t, f.env), u))
	f.g.Close()
	l.err("down", decryptSecret(t, f.decryptor(t, f.env), u))
}

// GCP KMS: an OIDC token the workload identity provider refuses does not
// show in the error.
func TestLeakScanGCPKMSFederationRefused(t *testing.T) {
	l := newLeakScan(t)
	f := newGCP(t)
	const refused = "eyJ.refused-oidc-token.sig"
	l.scan.Secret("refused OIDC token", refused)
	if err := os.WriteFile(filepath.Join(filepath.Dir(f.env["GOOGLE_APPLICATION_CREDENTIALS"]), "oidc-token"), []byte(refused), 0o600); err != nil {
		t.Fatal(err)
	}
	l.err("federation refused", decryptSecret(t, f.decryptor(t, f.env), f.secret(t)))
}

// Azure Key Vault: the OIDC token, client secrets and access tokens never
// show in what decryption says, whether it decrypts, has no credentials,
// is refused by Entra ID or Key Vault, or cannot reach Azure.
func TestLeakScanAzureKV(t *testing.T) {
	t.Parallel() // Azure's SDK retries a refused connection for seconds
	l := newLeakScan(t)
	f := newAzure(t)
	f.a.AllowKey(azureVaultName, azureKeyName, azureSecretApp)
	l.scan.Secret("OIDC token", azureOIDCToken)
	l.scan.Secret("client secret", azureAppSecret)
	const wrong = "wrong-client-secret~0123"
	l.scan.Secret("wrong client secret", wrong)
	secretEnv := map[string]string{"AZURE_TENANT_ID": f.a.Tenant, "AZURE_CLIENT_ID": azureSecretApp, "AZURE_CLIENT_SECRET": azureAppSecret}
	if err := decryptSecret(t, f.decryptor(t, secretEnv), f.secret(t)); err != nil {
		t.Fatal(err)
	}
	l.err("no credentials", decryptSecret(t, f.decryptor(t, nil), f.secret(t)))
	l.err("denied on the key", decryptSecret(t, f.decryptor(t, f.env), f.secret(t)))
	l.err("wrong secret", decryptSecret(t, f.decryptor(t, map[string]string{"AZURE_TENANT_ID": f.a.Tenant, "AZURE_CLIENT_ID": azureSecretApp, "AZURE_CLIENT_SECRET": wrong}), f.secret(t)))
	l.err("no token file", decryptSecret(t, f.decryptor(t, map[string]string{"AZURE_TENANT_ID": f.a.Tenant, "AZURE_CLIENT_ID": azureDeployer, "AZURE_FEDERATED_TOKEN_FILE": filepath.Join(t.TempDir(), "absent")}), f.secret(t)))
	u := f.secret(t)
	f.a.DeleteKey(azureVaultName, azureKeyName)
	l.err("key deleted", decryptSecret(t, f.decryptor(t, secretEnv), u))
	f.a.Close()
	l.err("down", decryptSecret(t, f.decryptor(t, secretEnv), u))
}
