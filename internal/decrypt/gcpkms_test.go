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

// The GCP KMS tests talk to a Google Cloud double (kmstest.GCP) through
// sops's gcpkms key source (Cloud KMS's REST API) and Google's own
// credential code, over HTTPS under Google's host names. Fixtures are
// encrypted by an admin allowed on the key; decryption runs with the
// credentials a test puts in the environment it passes.
const (
	gcpServiceAccount = "deployer@kmstest.iam.gserviceaccount.com"
	gcpWIFAudience    = "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/github/providers/github"
	gcpOIDCToken      = "eyJhbGciOiJSUzI1NiJ9.github-oidc-token-for-gcp.sig"
	gcpPrincipal      = "principal://iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/github/subject/repo:acme/deployments:ref:refs/heads/main"
)

type gcpFixture struct {
	g   *kmstest.GCP
	key string
	// env is what google-github-actions/auth would set up: Workload
	// Identity Federation, impersonating the deployer account.
	env map[string]string
}

func newGCP(t *testing.T) *gcpFixture {
	t.Helper()
	g := kmstest.NewGCP(t)
	key := g.CreateKey("sops", "deploy")
	g.AllowKey(key, "user:admin")
	dir := t.TempDir()
	oidc := filepath.Join(dir, "oidc-token")
	if err := os.WriteFile(oidc, []byte(gcpOIDCToken), 0o600); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(dir, "gha-creds.json")
	if err := os.WriteFile(creds, kmstest.ExternalAccount(gcpWIFAudience, oidc, gcpServiceAccount), 0o600); err != nil {
		t.Fatal(err)
	}
	g.AllowFederation(gcpWIFAudience, gcpOIDCToken, gcpPrincipal)
	g.AllowImpersonation(gcpServiceAccount, gcpPrincipal)
	return &gcpFixture{g: g, key: key, env: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": creds}}
}

// secret is testdata/secret.yaml encrypted for the key, as built.
func (f *gcpFixture) secret(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	out, err := sopstest.EncryptGroupsWith(sopstest.Services{GoogleToken: f.g.IssueToken("user:admin"), HTTPClient: kmstest.Client(f.g)},
		[]sopstest.KeyGroup{{GCPKMS: []string{f.key}}}, 0, readTestdata(t, "secret.yaml"), formats.Yaml, k8sRegex)
	if err != nil {
		t.Fatal(err)
	}
	return fromYAML(t, out)
}

func (f *gcpFixture) decryptor(t *testing.T, env map[string]string) *Decryptor {
	t.Helper()
	d, err := New(Options{Getenv: func(k string) string { return env[k] }, HTTPClient: kmstest.Client(f.g)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Workload Identity Federation as google-github-actions/auth sets it up:
// the OIDC token exchanged at STS, the service account impersonated, its
// token used for Cloud KMS; one token for every document.
func TestGCPKMSWorkloadIdentityFederation(t *testing.T) {
	f := newGCP(t)
	f.g.AllowKey(f.key, "serviceAccount:"+gcpServiceAccount)
	d := f.decryptor(t, f.env)
	logs := captureSopsLogs(t)
	for range 2 {
		u := f.secret(t)
		if err := decryptSecret(t, d, u); err != nil {
			t.Fatal(err)
		}
		assertDecryptedSecret(t, u)
	}
	for target, want := range map[string]int{"STS.Token": 1, "IAM.GenerateAccessToken": 1, "KMS.Decrypt": 2} {
		if n := f.g.Count(target); n != want {
			t.Errorf("%d %s requests, want %d", n, target, want)
		}
	}
	for _, r := range f.g.Requests() {
		if r.Target == "KMS.Decrypt" && r.Principal != "serviceAccount:"+gcpServiceAccount {
			t.Errorf("Cloud KMS decrypted for %q", r.Principal)
		}
	}
	if logs.Len() != 0 {
		t.Errorf("sops logged: %s", logs)
	}
}

// A service account key, in sops's GOOGLE_CREDENTIALS as JSON; an access
// token in GOOGLE_OAUTH_ACCESS_TOKEN.
func TestGCPKMSOtherCredentials(t *testing.T) {
	f := newGCP(t)
	f.g.AllowKey(f.key, "serviceAccount:"+gcpServiceAccount)
	f.g.AllowKey(f.key, "user:ci")
	for name, env := range map[string]map[string]string{
		"service account key": {"GOOGLE_CREDENTIALS": string(f.g.ServiceAccountKey(gcpServiceAccount))},
		"access token":        {"GOOGLE_OAUTH_ACCESS_TOKEN": f.g.IssueToken("user:ci"), "GOOGLE_APPLICATION_CREDENTIALS": f.env["GOOGLE_APPLICATION_CREDENTIALS"]},
	} {
		t.Run(name, func(t *testing.T) {
			u := f.secret(t)
			if err := decryptSecret(t, f.decryptor(t, env), u); err != nil {
				t.Fatal(err)
			}
			assertDecryptedSecret(t, u)
		})
	}
}

// A self-hosted runner on a GCE VM or in a GKE pod with Workload
// Identity: the metadata server's token of the machine's (or the pod's
// bound) service account decrypts, one token for every document.
func TestGCPKMSMetadataServer(t *testing.T) {
	f := newGCP(t)
	meta := kmstest.NewGCEMetadata(t, f.g, "runner@shop.iam.gserviceaccount.com")
	f.g.AllowKey(f.key, "serviceAccount:runner@shop.iam.gserviceaccount.com")
	d := f.decryptor(t, map[string]string{"GCE_METADATA_HOST": meta.Host(), "HOME": t.TempDir()})
	for range 2 {
		u := f.secret(t)
		if err := decryptSecret(t, d, u); err != nil {
			t.Fatal(err)
		}
		assertDecryptedSecret(t, u)
	}
	issued := map[string]bool{}
	for _, tok := range f.g.Tokens() {
		if p, _ := f.g.Principal(tok); p == "serviceAccount:runner@shop.iam.gserviceaccount.com" {
			issued[tok] = true
		}
	}
	if n := meta.Count("Metadata.Token"); n != 1 || len(issued) != 1 {
		t.Errorf("%d tokens from the metadata server (%d issued), want 1", n, len(issued))
	}
	for _, r := range f.g.Requests() {
		if r.Target == "KMS.Decrypt" && r.Principal != "serviceAccount:runner@shop.iam.gserviceaccount.com" {
			t.Errorf("Cloud KMS decrypted for %q", r.Principal)
		}
	}
	if n := f.g.Count("KMS.Decrypt"); n != 2 {
		t.Errorf("%d decrypt requests, want 2", n)
	}
}

// A metadata server named but not answering: unreachable, named.
func TestGCPKMSMetadataServerUnreachable(t *testing.T) {
	f := newGCP(t)
	err := decryptSecret(t, f.decryptor(t, map[string]string{"GCE_METADATA_HOST": "127.0.0.1:1"}), f.secret(t))
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("err = %v, want ErrUnreachable", err)
	}
	assertContains(t, err, "GCP KMS key "+f.key+": ", "the metadata server (GCE_METADATA_HOST=127.0.0.1:1): no answer from 127.0.0.1:1")
}

// No credentials anywhere: the error says what to set and what was tried
// (here, the metadata server not looked for: a test sends no DNS probe).
func TestGCPKMSNoCredentials(t *testing.T) {
	f := newGCP(t)
	err := decryptSecret(t, f.decryptor(t, map[string]string{"METADATA_SERVER_DETECTION": "none"}), f.secret(t))
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrNoCredentials) {
		t.Errorf("err = %v, want ErrNoCredentials", err)
	}
	assertContains(t, err, "GCP KMS key "+f.key+": no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS")
	assertContains(t, err, "(tried: GOOGLE_OAUTH_ACCESS_TOKEN, GOOGLE_CREDENTIALS and GOOGLE_APPLICATION_CREDENTIALS are not set; gcloud's application default credentials: no home directory (HOME); the metadata server: not looked for (METADATA_SERVER_DETECTION=none))")
	if n := f.g.Count("KMS.Decrypt"); n != 0 {
		t.Errorf("%d decrypt requests without credentials", n)
	}
}

func TestGCPKMSAccessDenied(t *testing.T) {
	f := newGCP(t) // the deployer account may not use the key
	err := decryptSecret(t, f.decryptor(t, f.env), f.secret(t))
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrAccessDenied) {
		t.Errorf("err = %v, want ErrAccessDenied", err)
	}
	assertContains(t, err, "GCP KMS key "+f.key+": access denied: GOOGLE_APPLICATION_CREDENTIALS (external_account) may not decrypt with the key",
		"Google 403: Permission 'cloudkms.cryptoKeyVersions.useToDecrypt' denied")
}

// The OIDC token is not one the workload identity provider trusts.
func TestGCPKMSFederationRefused(t *testing.T) {
	f := newGCP(t)
	f.g.AllowKey(f.key, "serviceAccount:"+gcpServiceAccount)
	if err := os.WriteFile(filepath.Join(filepath.Dir(f.env["GOOGLE_APPLICATION_CREDENTIALS"]), "oidc-token"), []byte("eyJ.another-repository.sig"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := decryptSecret(t, f.decryptor(t, f.env), f.secret(t))
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrAccessDenied) {
		t.Errorf("err = %v, want ErrAccessDenied", err)
	}
	assertContains(t, err, "GCP KMS key "+f.key+": access denied: the token endpoint refused the credentials of GOOGLE_APPLICATION_CREDENTIALS (external_account)", "invalid_grant")
	if strings.Contains(err.Error(), "another-repository") {
		t.Error("the error quotes the OIDC token")
	}
}

func TestGCPKMSKeyNotFound(t *testing.T) {
	f := newGCP(t)
	f.g.AllowKey(f.key, "serviceAccount:"+gcpServiceAccount)
	u := f.secret(t)
	f.g.DeleteKey(f.key)
	err := decryptSecret(t, f.decryptor(t, f.env), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrKeyNotFound) {
		t.Errorf("err = %v, want ErrKeyNotFound", err)
	}
	assertContains(t, err, "GCP KMS key "+f.key+": key not found (Google 404: CryptoKey "+f.key+" not found.)")
}

func TestGCPKMSUnreachable(t *testing.T) {
	f := newGCP(t)
	u := f.secret(t)
	f.g.Close()
	err := decryptSecret(t, f.decryptor(t, f.env), u)
	dataKeyFailure(t, err)
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("err = %v, want ErrUnreachable", err)
	}
	assertContains(t, err, "GCP KMS key "+f.key+": key service unreachable", "connection refused")
}
