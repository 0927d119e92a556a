package acr_test

import (
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/azure"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/acr"
)

func TestCheckHost(t *testing.T) {
	for host, ok := range map[string]bool{
		"myregistry.azurecr.io": true, "myregistry.azurecr.io:443": true, "MyRegistry.azurecr.cn": true,
		"127.0.0.1:5000": false, "azurecr.io": false, "my.registry.azurecr.io": false, "myregistry.azurecr.io.attacker.example": false,
		"myregistry.azurecr.io:8443": false,
	} {
		if err := acr.CheckHost(host); (err == nil) != ok {
			t.Errorf("%s: %v, want ok %v", host, err, ok)
		}
	}
}

// provider azure: an ARM token of the environment's Entra ID credential
// (a client secret, at the Entra ID double), exchanged at the registry
// for a refresh token, the null-GUID user's password, for Azure's
// registries only; an offline diff takes the environment's credentials
// only, never the az CLI's session.
func TestLogin(t *testing.T) {
	a := kmstest.NewAzure(t)
	a.AddApp("puller", "s3cret-value")
	env := map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": "puller", "AZURE_CLIENT_SECRET": "s3cret-value"}
	opts := func(env map[string]string) acr.Options {
		return acr.Options{Credentials: azure.Options{Getenv: func(k string) string { return env[k] }, HTTPClient: kmstest.Client(a)}}
	}
	user, refresh, err := acr.Login(t.Context(), "fleet.azurecr.io", opts(env))
	if err != nil || user != acr.Username {
		t.Fatalf("%q, %v", user, err)
	}
	if client, registry, ok := a.ACRPrincipal(refresh); !ok || client != "puller" || registry != "fleet.azurecr.io" {
		t.Errorf("the refresh token is %q's for %q (%v)", client, registry, ok)
	}
	before := a.Count("Entra.Token")
	if _, _, err := acr.Login(t.Context(), "registry.attacker.example", opts(env)); err == nil || !strings.Contains(err.Error(), "is not an Azure Container Registry") {
		t.Errorf("another host: %v", err)
	}
	if a.Count("Entra.Token") != before {
		t.Error("a token was asked for another host")
	}
	// Offline, the az CLI's session is not taken.
	cli := map[string]string{"AZURE_CONFIG_DIR": a.AzLoginHome(t, "puller")}
	if _, _, err := acr.Login(t.Context(), "fleet.azurecr.io", acr.Options{EnvironmentOnly: true, Credentials: opts(cli).Credentials}); err == nil {
		t.Error("offline, the az CLI's session was taken")
	}
	if _, _, err := acr.Login(t.Context(), "fleet.azurecr.io", acr.Options{EnvironmentOnly: true, Credentials: opts(env).Credentials}); err != nil {
		t.Errorf("offline, the environment's secret: %v", err)
	}
	// A wrong secret: Entra ID refuses it, said without the secret.
	wrong := map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": "puller", "AZURE_CLIENT_SECRET": "wrong-s3cret"}
	if _, _, err := acr.Login(t.Context(), "fleet.azurecr.io", opts(wrong)); err == nil || strings.Contains(err.Error(), "wrong-s3cret") {
		t.Errorf("a wrong secret: %v", err)
	}
}
