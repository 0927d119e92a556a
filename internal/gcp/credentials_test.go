package gcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
)

func TestTokenSourceFromTheEnvironment(t *testing.T) {
	g := kmstest.NewGCP(t)
	dir := t.TempDir()
	saFile := filepath.Join(dir, "sa.json")
	if err := os.WriteFile(saFile, g.ServiceAccountKey("sa@kmstest.iam.gserviceaccount.com"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := g.IssueToken("user:me")
	tests := []struct {
		name       string
		env        map[string]string
		wantSource string
		wantErr    string
	}{
		{name: "nothing", wantErr: "no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS"},
		{name: "an access token wins", env: map[string]string{"GOOGLE_OAUTH_ACCESS_TOKEN": tok, "GOOGLE_APPLICATION_CREDENTIALS": saFile}, wantSource: "GOOGLE_OAUTH_ACCESS_TOKEN"},
		{name: "application default credentials", env: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": saFile}, wantSource: "GOOGLE_APPLICATION_CREDENTIALS (service_account)"},
		{name: "sops's variable, as a path", env: map[string]string{"GOOGLE_CREDENTIALS": saFile, "GOOGLE_APPLICATION_CREDENTIALS": "/nowhere"}, wantSource: "GOOGLE_CREDENTIALS (service_account)"},
		{name: "missing file", env: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(dir, "absent.json")}, wantErr: "GOOGLE_APPLICATION_CREDENTIALS: reading the credentials file"},
		{name: "not JSON", env: map[string]string{"GOOGLE_CREDENTIALS": "{not json"}, wantErr: "GOOGLE_CREDENTIALS: not a credentials file (JSON)"},
		{name: "a client secret for a browser flow", env: map[string]string{"GOOGLE_CREDENTIALS": `{"installed":{"client_id":"x","client_secret":"hush"}}`}, wantErr: `credentials of type "" are not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			creds, err := TokenSource(context.Background(), Options{Getenv: func(k string) string { return tt.env[k] }, HTTPClient: kmstest.Client(g)}, CloudPlatformScope)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hush") {
					t.Error("the error quotes the credentials")
				}
				if tt.name == "nothing" && !errors.Is(err, ErrNoCredentials) {
					t.Error("not ErrNoCredentials")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if creds.Source != tt.wantSource {
				t.Errorf("source %q, want %q", creds.Source, tt.wantSource)
			}
			got, err := creds.Token()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := g.Principal(got.AccessToken); !ok {
				t.Error("the token is not one Google issued")
			}
		})
	}
}
