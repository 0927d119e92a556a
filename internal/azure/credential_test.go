package azure

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
)

func TestNewCredentialFromTheEnvironment(t *testing.T) {
	a := kmstest.NewAzure(t)
	a.AddApp("wi-app", "")
	a.AllowFederated("wi-app", "oidc-token")
	a.AddApp("secret-app", "s3cret-value")
	gh := kmstest.NewGitHubOIDC(t)
	a.AddApp("gh-app", "")
	a.AllowFederated("gh-app", gh.TokenFor(GitHubAudience))
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("oidc-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	// managedidentity (azidentity's MSAL) caches tokens for the process:
	// no other test of the package asks for the system-assigned identity.
	imds := kmstest.NewAzureIMDS(t, a, "vm-identity", "user-identity")
	home := t.TempDir()
	tests := []struct {
		name       string
		env        map[string]string
		wantSource string
		wantClient string // the application or identity tokens are for; default AZURE_CLIENT_ID
		wantErr    string
	}{
		{name: "nothing", wantErr: "no Azure credentials: set AZURE_TENANT_ID and AZURE_CLIENT_ID"},
		{name: "ids without a secret or token file", env: map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": "wi-app"}, wantErr: "no Azure credentials"},
		{name: "no client ID", env: map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_SECRET": "s3cret-value"}, wantErr: "(AZURE_CLIENT_ID not set)"},
		{name: "workload identity wins", env: map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": "wi-app", "AZURE_FEDERATED_TOKEN_FILE": file, "AZURE_CLIENT_SECRET": "unused"},
			wantSource: "workload identity (AZURE_FEDERATED_TOKEN_FILE) of application wi-app"},
		{name: "client secret", env: map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": "secret-app", "AZURE_CLIENT_SECRET": "s3cret-value"},
			wantSource: "client secret (AZURE_CLIENT_SECRET) of application secret-app"},
		{name: "GitHub OIDC", env: withIDs(gh.Env(), a.Tenant, "gh-app"),
			wantSource: "GitHub OIDC token (ACTIONS_ID_TOKEN_REQUEST_URL) of application gh-app"},
		// Every job with id-token: write has it, for other clouds too.
		{name: "GitHub OIDC alone", env: gh.Env(), wantErr: "no Azure credentials"},
		{name: "nothing anywhere", env: map[string]string{"HOME": home},
			wantErr: "(tried: the environment: AZURE_FEDERATED_TOKEN_FILE and AZURE_CLIENT_SECRET are not set, nor GitHub OIDC (ACTIONS_ID_TOKEN_REQUEST_URL) with AZURE_TENANT_ID and AZURE_CLIENT_ID; " +
				"managed identity: no IDENTITY_ENDPOINT or MSI_ENDPOINT, and IMDS is asked for only with AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential; " +
				"the az CLI: no account signed in (no " + filepath.Join(home, ".azure", "azureProfile.json") + "))"},
		// A user-assigned identity's client ID does not ask for IMDS.
		{name: "a client ID alone", env: map[string]string{"AZURE_CLIENT_ID": "user-identity"}, wantErr: "no Azure credentials"},
		{name: "managed identity asked for", env: map[string]string{"AZURE_TOKEN_CREDENTIALS": "ManagedIdentityCredential"},
			wantSource: "system-assigned managed identity (IMDS)", wantClient: "vm-identity"},
		{name: "a user-assigned managed identity", env: map[string]string{"AZURE_TOKEN_CREDENTIALS": "managedidentitycredential", "AZURE_CLIENT_ID": "user-identity"},
			wantSource: "user-assigned managed identity user-identity (AZURE_CLIENT_ID, IMDS)"},
		{name: "prod: the environment first", env: map[string]string{"AZURE_TOKEN_CREDENTIALS": "prod", "AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": "secret-app", "AZURE_CLIENT_SECRET": "s3cret-value"},
			wantSource: "client secret (AZURE_CLIENT_SECRET) of application secret-app"},
		{name: "prod: then managed identity", env: map[string]string{"AZURE_TOKEN_CREDENTIALS": "prod"},
			wantSource: "system-assigned managed identity (IMDS)", wantClient: "vm-identity"},
		{name: "only the environment", env: map[string]string{"AZURE_TOKEN_CREDENTIALS": "EnvironmentCredential", "HOME": home},
			wantErr: "(tried: the environment: AZURE_FEDERATED_TOKEN_FILE and AZURE_CLIENT_SECRET are not set, nor GitHub OIDC (ACTIONS_ID_TOKEN_REQUEST_URL) with AZURE_TENANT_ID and AZURE_CLIENT_ID)"},
		{name: "a credential not supported", env: map[string]string{"AZURE_TOKEN_CREDENTIALS": "AzurePowerShellCredential"},
			wantErr: "AZURE_TOKEN_CREDENTIALS=AzurePowerShellCredential: not supported here"},
		{name: "a credential azidentity does not know", env: map[string]string{"AZURE_TOKEN_CREDENTIALS": "Kerberos"},
			wantErr: `AZURE_TOKEN_CREDENTIALS="Kerberos": want EnvironmentCredential, WorkloadIdentityCredential, ManagedIdentityCredential, AzureCLICredential, prod or dev`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cred, err := NewCredential(Options{Getenv: func(k string) string { return tt.env[k] }, HTTPClient: kmstest.Client(a, gh, imds)})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || (!errors.Is(err, ErrNoCredentials) && !strings.HasPrefix(tt.name, "a credential")) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Error("the error quotes the secret")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cred.Source != tt.wantSource {
				t.Errorf("source %q, want %q", cred.Source, tt.wantSource)
			}
			tok, err := cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{kmstest.AKSAudience + "/.default"}})
			if err != nil {
				t.Fatal(err)
			}
			if id, aud, ok := a.Principal(tok.Token); !ok || id != cmp.Or(tt.wantClient, tt.env["AZURE_CLIENT_ID"]) || aud != kmstest.AKSAudience {
				t.Errorf("token of %q for %q", id, aud)
			}
		})
	}
}

func withIDs(env map[string]string, tenant, client string) map[string]string {
	out := map[string]string{"AZURE_TENANT_ID": tenant, "AZURE_CLIENT_ID": client}
	for k, v := range env {
		out[k] = v
	}
	return out
}

// GitHub's OIDC token is asked for with azure/login's audience, the
// request token as bearer; a refusal says GitHub's answer and what a job
// needs, never the request token.
func TestGitHubOIDCCredential(t *testing.T) {
	a := kmstest.NewAzure(t)
	gh := kmstest.NewGitHubOIDC(t)
	a.AddApp("gh-app", "")
	a.AllowFederated("gh-app", gh.TokenFor(GitHubAudience))
	env := withIDs(gh.Env(), a.Tenant, "gh-app")
	cred, err := NewCredential(Options{Getenv: func(k string) string { return env[k] }, HTTPClient: kmstest.Client(a, gh)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{kmstest.AzureARMAudience + "/.default"}}); err != nil {
		t.Fatal(err)
	}
	reqs := gh.Requests()
	if len(reqs) != 1 || reqs[0].Key != GitHubAudience || reqs[0].Error != "" {
		t.Errorf("GitHub OIDC requests %+v", reqs)
	}

	env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = "not-the-request-token"
	cred, err = NewCredential(Options{Getenv: func(k string) string { return env[k] }, HTTPClient: kmstest.Client(a, gh)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{kmstest.AzureARMAudience + "/.default"}})
	msg := ""
	if err != nil {
		msg = TokenError(err)
	}
	if !strings.Contains(msg, "GitHub's OIDC token endpoint answered 401 Unauthorized") || !strings.Contains(msg, "id-token: write") || strings.Contains(msg, "not-the-request-token") {
		t.Errorf("TokenError = %q", msg)
	}
}
