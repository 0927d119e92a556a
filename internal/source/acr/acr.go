// Package acr logs in to Azure Container Registry: the registry
// credentials of a Flux source with provider azure, as source-controller
// gets them (fluxcd/pkg/auth/azure): an Entra ID access token for ARM,
// of the credential the environment names (internal/azure), exchanged at
// the registry's /oauth2/exchange for a refresh token, the password of
// the null-GUID user.
package acr

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/kustomize-deploy/kustomize-deploy/internal/azure"
)

// Username is the user an ACR refresh token logs in as.
const Username = "00000000-0000-0000-0000-000000000000"

// armScope is what the exchanged token is for, as Flux asks for it.
const armScope = "https://management.azure.com/.default"

// registryHost is an Azure Container Registry's host, in Azure's clouds.
var registryHost = regexp.MustCompile(`^[a-z0-9]+\.azurecr\.(io|cn|de|us)$`)

// CheckHost refuses a host (host or host:443) that is not an Azure
// Container Registry's, by name: an Azure token is sent to Azure only,
// whatever a source's URL names.
func CheckHost(host string) error {
	if registryHost.MatchString(strings.ToLower(strings.TrimSuffix(host, ":443"))) {
		return nil
	}
	return fmt.Errorf("%s is not an Azure Container Registry (<name>.azurecr.io): an Azure token is sent to Azure only", host)
}

// Options say where Azure credentials come from.
type Options struct {
	// Credentials are the Entra ID credential's options (the
	// environment, the HTTP client reaching Entra ID and the registry).
	Credentials azure.Options
	// EnvironmentOnly takes only the credentials the environment names
	// (workload identity federation, a client secret, GitHub OIDC), never
	// a managed identity's or the az CLI's session (an offline diff).
	EnvironmentOnly bool
}

// maxResponse bounds what the exchange's answer may take.
const maxResponse = 1 << 20

// Login returns the basic-auth credentials of the registry host: Username
// and a refresh token (a secret: the caller masks it). A host that is not
// an Azure Container Registry's is refused by name before any credential
// is asked for.
func Login(ctx context.Context, host string, o Options) (username, password string, err error) {
	if err := CheckHost(host); err != nil {
		return "", "", err
	}
	host = strings.ToLower(strings.TrimSuffix(host, ":443"))
	opts := o.Credentials
	if o.EnvironmentOnly {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		opts.Getenv = func(k string) string {
			if k == azure.TokenCredentialsEnv {
				return "EnvironmentCredential"
			}
			return getenv(k)
		}
	}
	cred, err := azure.NewCredential(opts)
	if err != nil {
		return "", "", fmt.Errorf("Azure Container Registry %s: %w", host, err)
	}
	tok, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{armScope}})
	if err != nil {
		return "", "", fmt.Errorf("Azure Container Registry %s: an ARM token of %s: %w", host, cred.Source, err)
	}
	form := url.Values{"grant_type": {"access_token"}, "service": {host}, "access_token": {tok.Token}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+host+"/oauth2/exchange", strings.NewReader(form.Encode()))
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	client := opts.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("Azure Container Registry %s: the token exchange: %w", host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return "", "", fmt.Errorf("Azure Container Registry %s: the token exchange: %w", host, err)
	}
	if resp.StatusCode != http.StatusOK {
		// The body is the registry's error, never a token: its status
		// is said, not the body, which may echo what was sent.
		return "", "", fmt.Errorf("Azure Container Registry %s: the token exchange of %s's token answered %s", host, cred.Source, resp.Status)
	}
	var out struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.RefreshToken == "" {
		return "", "", fmt.Errorf("Azure Container Registry %s: the token exchange answered no refresh token", host)
	}
	return Username, out.RefreshToken, nil
}
