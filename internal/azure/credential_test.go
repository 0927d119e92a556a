package azure

import (
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
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("oidc-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		env        map[string]string
		wantSource string
		wantErr    string
	}{
		{name: "nothing", wantErr: "no Azure credentials: set AZURE_TENANT_ID and AZURE_CLIENT_ID"},
		{name: "ids without a secret or token file", env: map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": "wi-app"}, wantErr: "no Azure credentials"},
		{name: "no client ID", env: map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_SECRET": "s3cret-value"}, wantErr: "(AZURE_CLIENT_ID not set)"},
		{name: "workload identity wins", env: map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": "wi-app", "AZURE_FEDERATED_TOKEN_FILE": file, "AZURE_CLIENT_SECRET": "unused"},
			wantSource: "workload identity (AZURE_FEDERATED_TOKEN_FILE) of application wi-app"},
		{name: "client secret", env: map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": "secret-app", "AZURE_CLIENT_SECRET": "s3cret-value"},
			wantSource: "client secret (AZURE_CLIENT_SECRET) of application secret-app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cred, err := NewCredential(Options{Getenv: func(k string) string { return tt.env[k] }, HTTPClient: kmstest.Client(a)})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrNoCredentials) {
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
			if id, aud, ok := a.Principal(tok.Token); !ok || id != tt.env["AZURE_CLIENT_ID"] || aud != kmstest.AKSAudience {
				t.Errorf("token of %q for %q", id, aud)
			}
		})
	}
}
