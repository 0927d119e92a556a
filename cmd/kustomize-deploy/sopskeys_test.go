package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/cmd/sops/formats"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// A unit with one Secret per key type Flux supports beyond age and AWS
// KMS: PGP, Vault transit, GCP KMS and Azure Key Vault, each key service
// an in-process double reached on the wire. build (text and JSON) and
// apply decrypt all four; with a Vault token and an Azure client secret
// the services refuse, the build fails naming both keys. Nothing of a
// private key, token, secret or value shows on stdout or stderr.
func TestLeakScanSOPSKeyServices(t *testing.T) {
	l := newLeakCLI(t)
	v := kmstest.NewVault(t, "vault.example.test")
	g := kmstest.NewGCP(t)
	a := kmstest.NewAzure(t)
	l.cloud = kmstest.Client(v, g, a)

	pgp, err := sopstest.NewPGPKey("deploy")
	if err != nil {
		t.Fatal(err)
	}
	vaultKey := v.CreateKey("transit", "deploy")
	v.AddToken("admin", "hvs.cli-admin-token-0001")
	v.Allow("admin", "transit", "deploy")
	v.AddToken("ci", "hvs.cli-ci-token-0123456")
	v.Allow("ci", "transit", "deploy")
	const (
		gcpAdmin = "serviceAccount:admin@shop.iam.gserviceaccount.com"
		deployer = "deployer@shop.iam.gserviceaccount.com"
		azureApp = "c0ffee00-0000-4000-8000-000000000001"
		azureAdm = "c0ffee00-0000-4000-8000-000000000002"
		secret   = "cli-azure-client-secret~0123"
	)
	gcpKey := g.CreateKey("deploy", "sops")
	g.AllowKey(gcpKey, gcpAdmin)
	g.AllowKey(gcpKey, "serviceAccount:"+deployer)
	saKey := g.ServiceAccountKey(deployer)
	vault, version := a.CreateKey("deployvault", "sops")
	azureKey := vault + "/keys/sops/" + version
	a.AddApp(azureApp, secret)
	a.AddApp(azureAdm, "")
	a.AllowKey("deployvault", "sops", azureApp)
	a.AllowKey("deployvault", "sops", azureAdm)

	svc := sopstest.Services{
		PGP: []sopstest.PGPKey{pgp}, VaultToken: "hvs.cli-admin-token-0001",
		GoogleToken: g.IssueToken(gcpAdmin), AzureToken: a.IssueToken(azureAdm, kmstest.AzureVaultAudience),
		HTTPClient: kmstest.Client(v, g, a),
	}
	values := map[string]string{"pgp": leakSpecial + "-pgp", "vault": leakData + "-vault", "gcp": leakEnv + "-gcp", "azure": leakRotOld + "-azure"}
	groups := map[string]sopstest.KeyGroup{
		"pgp": {PGP: []string{pgp.Fingerprint}}, "vault": {Vault: []string{vaultKey}},
		"gcp": {GCPKMS: []string{gcpKey}}, "azure": {AzureKV: []string{azureKey}},
	}
	dir := t.TempDir()
	var resources []string
	for name, value := range values {
		l.scan.Secret(name+" value", value)
		plain, err := yaml.Marshal(secretObject(name+"-creds", "", map[string]any{"value": value}, nil))
		if err != nil {
			t.Fatal(err)
		}
		enc, err := sopstest.EncryptGroupsWith(svc, []sopstest.KeyGroup{groups[name]}, 0, plain, formats.Yaml, sopstest.K8sSecretRegex)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		writeFile(t, filepath.Join(dir, name+".enc.yaml"), string(enc))
		resources = append(resources, name+".enc.yaml")
	}
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: ["+strings.Join(resources, ", ")+"]\n")
	pgpFile := filepath.Join(t.TempDir(), "deploy.asc")
	writeFile(t, pgpFile, pgp.Private)
	saFile := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(saFile, saKey, 0o600); err != nil {
		t.Fatal(err)
	}
	var sa struct {
		PrivateKey string `json:"private_key"`
	}
	if err := yaml.Unmarshal(saKey, &sa); err != nil {
		t.Fatal(err)
	}
	l.scan.Secret("PGP private key", pgp.Private)
	l.scan.Secret("Vault token", "hvs.cli-ci-token-0123456")
	l.scan.Secret("Google service account key", sa.PrivateKey)
	l.scan.Secret("Azure client secret", secret)
	l.env["VAULT_TOKEN"] = "hvs.cli-ci-token-0123456"
	l.env["GOOGLE_APPLICATION_CREDENTIALS"] = saFile
	l.env["AZURE_TENANT_ID"], l.env["AZURE_CLIENT_ID"], l.env["AZURE_CLIENT_SECRET"] = a.Tenant, azureApp, secret

	text, js := l.both("build", "build", "--path", dir, "--sops-pgp-key-file", pgpFile)
	if text.code != exitOK || js.code != exitOK {
		t.Fatalf("build: exit %d/%d\n%s\n%s", text.code, js.code, text.stderr, js.stderr)
	}
	o := l.run("apply", "apply", "--name", "keys", "--path", dir, "--target-namespace", l.ns, "--sops-pgp-key-file", pgpFile, "--wait=false")
	if o.code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	for name, value := range values {
		s, err := cluster.Client(t).CoreV1().Secrets(l.ns).Get(t.Context(), name+"-creds", metav1.GetOptions{})
		if err != nil || string(s.Data["value"]) != value {
			t.Errorf("%s-creds: %v", name, err)
		}
	}

	// Refused credentials: the build fails naming each key, quoting none.
	l.env["VAULT_TOKEN"] = "hvs.cli-refused-token-789"
	l.env["AZURE_CLIENT_SECRET"] = "cli-wrong-client-secret~0123"
	l.scan.Secret("refused Vault token", "hvs.cli-refused-token-789")
	l.scan.Secret("wrong Azure client secret", "cli-wrong-client-secret~0123")
	o = l.run("build refused", "build", "--path", dir, "--sops-pgp-key-file", pgpFile)
	if o.code == exitOK || !strings.Contains(o.stderr, vaultKey) || !strings.Contains(o.stderr, azureKey) {
		t.Errorf("build with refused credentials: exit %d\n%s", o.code, o.stderr)
	}
	for _, tok := range append(g.Tokens(), a.Tokens()...) {
		l.scan.Unmasked("access token "+tok[len(tok)-6:], tok)
	}
}
