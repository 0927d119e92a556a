// Package azure reaches Azure without the az CLI or kubelogin: an Entra
// ID credential read from the environment (workload identity federation
// or a client secret), and AKS clusters by resource ID.
package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// ErrNoCredentials: the environment holds no Azure credentials.
var ErrNoCredentials = errors.New("no Azure credentials: set AZURE_TENANT_ID and AZURE_CLIENT_ID, with GitHub OIDC (the job's permissions: id-token: write), AZURE_FEDERATED_TOKEN_FILE (workload identity federation) or AZURE_CLIENT_SECRET")

// GitHubAudience is the audience of the GitHub OIDC token presented to
// Entra ID, as azure/login asks for it (and a federated credential for
// GitHub expects by default).
const GitHubAudience = "api://AzureADTokenExchange"

// Options say where credentials come from.
type Options struct {
	// Getenv reads the environment; nil reads none.
	Getenv func(string) string
	// HTTPClient reaches Entra ID (and Azure's APIs); nil means the SDK's
	// default.
	HTTPClient *http.Client
}

// Credential is an Entra ID credential and where it came from.
type Credential struct {
	azcore.TokenCredential
	// Source names the kind of credential and the application, for
	// messages: "workload identity (AZURE_FEDERATED_TOKEN_FILE) of
	// application <client ID>".
	Source string
}

// NewCredential makes a credential from the environment, as azidentity's
// EnvironmentCredential and WorkloadIdentityCredential read it:
// AZURE_TENANT_ID and AZURE_CLIENT_ID, with AZURE_FEDERATED_TOKEN_FILE
// (an OIDC token the application's federated credential trusts; read
// again at every token request, as Kubernetes and CI refresh it), else
// AZURE_CLIENT_SECRET, else GitHub Actions' own OIDC token, as
// azure/login presents it (ACTIONS_ID_TOKEN_REQUEST_URL and
// ACTIONS_ID_TOKEN_REQUEST_TOKEN, which a job with "id-token: write"
// has; fetched for GitHubAudience at every token request);
// AZURE_AUTHORITY_HOST for another cloud. Managed identity and the az CLI
// are not tried: they would probe a metadata endpoint or run a program.
// Errors name variables, never values.
func NewCredential(opts Options) (*Credential, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	tenant, client := strings.TrimSpace(getenv("AZURE_TENANT_ID")), strings.TrimSpace(getenv("AZURE_CLIENT_ID"))
	file, secret := strings.TrimSpace(getenv("AZURE_FEDERATED_TOKEN_FILE")), getenv("AZURE_CLIENT_SECRET")
	oidcURL, oidcToken := strings.TrimSpace(getenv("ACTIONS_ID_TOKEN_REQUEST_URL")), strings.TrimSpace(getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN"))
	github := oidcURL != "" && oidcToken != ""
	if file == "" && secret == "" && (!github || (tenant == "" && client == "")) {
		// GitHub's OIDC endpoint alone is no Azure credential: every job
		// with id-token: write has it, for AWS or Google too.
		return nil, ErrNoCredentials
	}
	var missing []string
	if tenant == "" {
		missing = append(missing, "AZURE_TENANT_ID")
	}
	if client == "" {
		missing = append(missing, "AZURE_CLIENT_ID")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w (%s not set)", ErrNoCredentials, strings.Join(missing, " and "))
	}
	co := clientOptions(getenv, opts.HTTPClient)
	if file != "" {
		cred, err := azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{
			ClientOptions: co, TenantID: tenant, ClientID: client, TokenFilePath: file,
		})
		if err != nil {
			return nil, fmt.Errorf("workload identity (AZURE_FEDERATED_TOKEN_FILE): %w", err)
		}
		return &Credential{cred, "workload identity (AZURE_FEDERATED_TOKEN_FILE) of application " + client}, nil
	}
	if secret != "" {
		cred, err := azidentity.NewClientSecretCredential(tenant, client, secret, &azidentity.ClientSecretCredentialOptions{ClientOptions: co})
		if err != nil {
			return nil, fmt.Errorf("client secret (AZURE_CLIENT_SECRET): %w", err)
		}
		return &Credential{cred, "client secret (AZURE_CLIENT_SECRET) of application " + client}, nil
	}
	oidc := githubOIDC{url: oidcURL, token: oidcToken, client: opts.HTTPClient}
	cred, err := azidentity.NewClientAssertionCredential(tenant, client, oidc.assertion, &azidentity.ClientAssertionCredentialOptions{ClientOptions: co})
	if err != nil {
		return nil, fmt.Errorf("GitHub OIDC (ACTIONS_ID_TOKEN_REQUEST_URL): %w", err)
	}
	return &Credential{cred, "GitHub OIDC token (ACTIONS_ID_TOKEN_REQUEST_URL) of application " + client}, nil
}

// githubOIDC fetches the job's OIDC token from GitHub Actions' ID token
// endpoint.
type githubOIDC struct {
	url, token string
	client     *http.Client
}

// assertion is a fresh OIDC token for GitHubAudience. Errors say GitHub's
// status and message, never the request token or the OIDC token.
func (g githubOIDC) assertion(ctx context.Context) (string, error) {
	u, err := url.Parse(g.url)
	if err != nil {
		return "", errors.New("ACTIONS_ID_TOKEN_REQUEST_URL is not a URL")
	}
	q := u.Query()
	q.Set("audience", GitHubAudience)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Accept", "application/json")
	client := g.client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("GitHub's OIDC token endpoint: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		Value   string `json:"value"`
		Message string `json:"message"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body)
	if resp.StatusCode != http.StatusOK || body.Value == "" {
		detail := resp.Status
		if body.Message != "" {
			detail += ": " + body.Message
		}
		return "", fmt.Errorf("GitHub's OIDC token endpoint answered %s (does the job have permissions: id-token: write?)", detail)
	}
	return body.Value, nil
}

// clientOptions are the SDK's options for the environment: the authority
// host of another cloud, the HTTP client.
func clientOptions(getenv func(string) string, hc *http.Client) azcore.ClientOptions {
	var co azcore.ClientOptions
	if hc != nil {
		co.Transport = hc
	}
	if host := strings.TrimSpace(getenv("AZURE_AUTHORITY_HOST")); host != "" {
		co.Cloud = cloud.AzurePublic
		co.Cloud.ActiveDirectoryAuthorityHost = host
	}
	return co
}

// TokenError says why Entra ID gave no token: its OAuth error (AADSTS
// code and first line of description: they name the application and the
// reason, never the secret or assertion), or the credential's own
// message (a token file that cannot be read).
func TokenError(err error) string {
	var afe *azidentity.AuthenticationFailedError
	if errors.As(err, &afe) {
		if afe.RawResponse != nil {
			if body, rerr := runtime.Payload(afe.RawResponse); rerr == nil {
				var e struct {
					Error       string `json:"error"`
					Description string `json:"error_description"`
				}
				if json.Unmarshal(body, &e) == nil && e.Error != "" {
					desc, _, _ := strings.Cut(e.Description, "\n")
					desc, _, _ = strings.Cut(desc, " Trace ID:")
					return strings.TrimSpace(e.Error + ": " + desc)
				}
			}
			return afe.RawResponse.Status
		}
		err = afe
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	msg, _, _ = strings.Cut(msg, ". To troubleshoot, visit")
	return strings.TrimSpace(msg)
}

// Refused reports whether err is Entra ID refusing a credential (an
// answer), rather than the credential failing before it asked (a token
// file that cannot be read).
func Refused(err error) bool {
	var afe *azidentity.AuthenticationFailedError
	return errors.As(err, &afe) && afe.RawResponse != nil
}

// ResponseError is an Azure API's error: its HTTP status, error code and
// message, as "403 Forbidden: <message>"; ok is false when err is none.
func ResponseError(err error) (status int, detail string, ok bool) {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return 0, "", false
	}
	detail = fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
	if re.RawResponse != nil {
		if body, rerr := runtime.Payload(re.RawResponse); rerr == nil {
			var e struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
				detail += ": " + e.Error.Message
			}
		}
	}
	return re.StatusCode, detail, true
}
