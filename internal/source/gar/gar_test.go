package gar_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gcp"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gar"
)

func TestCheckHost(t *testing.T) {
	for host, ok := range map[string]bool{
		"europe-docker.pkg.dev": true, "us-central1-docker.pkg.dev:443": true, "gcr.io": true, "eu.gcr.io": true,
		"127.0.0.1:5000": false, "docker.pkg.dev": false, "europe-docker.pkg.dev.attacker.example": false, "gcr.io.attacker.example": false,
		"europe-docker.pkg.dev:8443": false,
	} {
		if err := gar.CheckHost(host); (err == nil) != ok {
			t.Errorf("%s: %v, want ok %v", host, err, ok)
		}
	}
}

// provider gcp: a Google access token of the application default
// credentials (a service account key named by the environment, exchanged
// at Google's token endpoint double), for Google's registries only; an
// offline diff takes the environment's credentials only, never the
// metadata server's identity.
func TestLogin(t *testing.T) {
	g := kmstest.NewGCP(t)
	sa := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(sa, g.ServiceAccountKey("puller@kmstest.iam.gserviceaccount.com"), 0o600); err != nil {
		t.Fatal(err)
	}
	meta := kmstest.NewGCEMetadata(t, g, "vm@kmstest.iam.gserviceaccount.com")
	opts := func(env map[string]string) gcp.Options {
		return gcp.Options{Getenv: func(k string) string { return env[k] }, HTTPClient: kmstest.Client(g)}
	}
	user, tok, err := gar.Login(t.Context(), "europe-docker.pkg.dev", gar.Options{Credentials: opts(map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": sa})})
	if err != nil || user != gar.Username {
		t.Fatalf("%q, %v", user, err)
	}
	if p, ok := g.Principal(tok); !ok || p != "serviceAccount:puller@kmstest.iam.gserviceaccount.com" {
		t.Errorf("the token is %q's (%v)", p, ok)
	}
	if _, _, err := gar.Login(t.Context(), "registry.attacker.example", gar.Options{Credentials: opts(map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": sa})}); err == nil || !strings.Contains(err.Error(), "is not a Google registry") {
		t.Errorf("another host: %v", err)
	}
	// Offline, the metadata server's identity is not taken.
	before := g.Count("OAuth2.Token")
	_, _, err = gar.Login(t.Context(), "europe-docker.pkg.dev", gar.Options{EnvironmentOnly: true, Credentials: opts(map[string]string{"GCE_METADATA_HOST": meta.Host()})})
	if err == nil || !strings.Contains(err.Error(), "an offline diff takes none from the runner's own identity") {
		t.Errorf("offline, the metadata server only: %v", err)
	}
	if _, _, err := gar.Login(t.Context(), "europe-docker.pkg.dev", gar.Options{EnvironmentOnly: true, Credentials: opts(map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": sa, "GCE_METADATA_HOST": meta.Host()})}); err != nil {
		t.Errorf("offline, the environment's key: %v", err)
	}
	if g.Count("OAuth2.Token") != before+1 {
		t.Errorf("token requests %d after %d", g.Count("OAuth2.Token"), before)
	}
}
