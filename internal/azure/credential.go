// Package azure reaches Azure without kubelogin: an Entra ID credential
// from the environment (workload identity federation, a client secret,
// GitHub OIDC), a managed identity or the az CLI's session, and AKS
// clusters by resource ID.
package azure

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// ErrNoCredentials: no Azure credentials were found (NoCredentialsError
// says where they were looked for).
var ErrNoCredentials = errors.New("no Azure credentials: set AZURE_TENANT_ID and AZURE_CLIENT_ID, with GitHub OIDC (the job's permissions: id-token: write), AZURE_FEDERATED_TOKEN_FILE (workload identity federation) or AZURE_CLIENT_SECRET; or sign in with azure/login (the az CLI); or, on a runner with a managed identity, set AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential (and AZURE_CLIENT_ID for a user-assigned one)")

// NoCredentialsError is ErrNoCredentials with what was tried, in order.
type NoCredentialsError struct {
	// Tried says, for each source, why it gave none.
	Tried []string
}

func (e *NoCredentialsError) Error() string {
	return ErrNoCredentials.Error() + " (tried: " + strings.Join(e.Tried, "; ") + ")"
}

// Is makes errors.Is(err, ErrNoCredentials) hold.
func (e *NoCredentialsError) Is(target error) bool { return target == ErrNoCredentials }

// GitHubAudience is the audience of the GitHub OIDC token presented to
// Entra ID, as azure/login asks for it (and a federated credential for
// GitHub expects by default).
const GitHubAudience = "api://AzureADTokenExchange"

// TokenCredentialsEnv is azidentity's choice of credentials
// (DefaultAzureCredential reads it): "prod", "dev", or a credential's
// name; NewCredential reads it the same way.
const TokenCredentialsEnv = "AZURE_TOKEN_CREDENTIALS"

// Options say where credentials come from.
type Options struct {
	// Getenv reads the environment; nil reads none.
	Getenv func(string) string
	// HTTPClient reaches Entra ID (and Azure's APIs, and a managed
	// identity's endpoint: IMDS at 169.254.169.254 is plain HTTP, and a
	// proxy must let it through); nil means the SDK's default.
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

// The sources NewCredential picks from.
const (
	fromEnvironment = 1 << iota
	fromManagedIdentity
	fromAzureCLI
)

// NewCredential picks the first source that holds credentials, in
// DefaultAzureCredential's order, without its probes:
//
//   - the environment, as azidentity's EnvironmentCredential and
//     WorkloadIdentityCredential read it: AZURE_TENANT_ID and
//     AZURE_CLIENT_ID, with AZURE_FEDERATED_TOKEN_FILE (an OIDC token the
//     application's federated credential trusts; read again at every
//     token request, as Kubernetes and CI refresh it), else
//     AZURE_CLIENT_SECRET, else GitHub Actions' own OIDC token, as
//     azure/login presents it (ACTIONS_ID_TOKEN_REQUEST_URL and
//     ACTIONS_ID_TOKEN_REQUEST_TOKEN, which a job with "id-token: write"
//     has; fetched for GitHubAudience at every token request);
//     AZURE_AUTHORITY_HOST for another cloud;
//   - a managed identity (system-assigned, or user-assigned by
//     AZURE_CLIENT_ID), through azidentity's ManagedIdentityCredential:
//     when the platform names its endpoint (IDENTITY_ENDPOINT: App
//     Service, Container Apps, Functions, Azure Arc, Service Fabric;
//     MSI_ENDPOINT: Cloud Shell, Azure ML), or when asked for
//     (AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential or prod): only
//     then IMDS at 169.254.169.254, which is never probed unasked: on a
//     GitHub-hosted runner (an Azure VM) it answers for GitHub's machine,
//     elsewhere it does not answer at all;
//   - the az CLI's session (`az account get-access-token`, as azidentity's
//     AzureCLICredential runs it): when an account is signed in
//     (azureProfile.json in AZURE_CONFIG_DIR or ~/.azure lists one, as
//     azure/login leaves it), or when asked for
//     (AZURE_TOKEN_CREDENTIALS=AzureCLICredential or dev).
//
// AZURE_TOKEN_CREDENTIALS, as azidentity reads it, limits the sources to
// one ("prod": the environment, then managed identity). Errors name
// variables, never values; with none found, a NoCredentialsError says
// what was tried. azidentity reads the managed identity endpoints'
// variables (IDENTITY_ENDPOINT, ...) from the process's environment
// itself: Getenv decides only whether it is asked.
func NewCredential(opts Options) (*Credential, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	sources, askedFor, err := chosenSources(getenv)
	if err != nil {
		return nil, err
	}
	var tried []string
	if sources&fromEnvironment != 0 {
		cred, err := environmentCredential(getenv, opts.HTTPClient)
		if cred != nil || err != nil {
			return cred, err
		}
		tried = append(tried, "the environment: AZURE_FEDERATED_TOKEN_FILE and AZURE_CLIENT_SECRET are not set, nor GitHub OIDC (ACTIONS_ID_TOKEN_REQUEST_URL) with AZURE_TENANT_ID and AZURE_CLIENT_ID")
	}
	if sources&fromManagedIdentity != 0 {
		endpoint := managedIdentityEndpoint(getenv)
		if endpoint != "" || askedFor {
			return managedIdentity(getenv, opts.HTTPClient, endpoint)
		}
		tried = append(tried, "managed identity: no IDENTITY_ENDPOINT or MSI_ENDPOINT, and IMDS is asked for only with "+TokenCredentialsEnv+"=ManagedIdentityCredential")
	}
	if sources&fromAzureCLI != 0 {
		account, where := azSession(getenv)
		if account != "" || askedFor {
			return azureCLI(account)
		}
		tried = append(tried, "the az CLI: "+where)
	}
	return nil, &NoCredentialsError{Tried: tried}
}

// chosenSources are the sources AZURE_TOKEN_CREDENTIALS allows, and
// whether it asked for them (then a managed identity is reached at IMDS,
// and the az CLI run without a session on record).
func chosenSources(getenv func(string) string) (sources int, askedFor bool, err error) {
	const want = "want EnvironmentCredential, WorkloadIdentityCredential, ManagedIdentityCredential, AzureCLICredential, prod or dev"
	switch v := strings.TrimSpace(getenv(TokenCredentialsEnv)); {
	case v == "":
		return fromEnvironment | fromManagedIdentity | fromAzureCLI, false, nil
	case v == "prod":
		return fromEnvironment | fromManagedIdentity, true, nil
	case v == "dev", strings.EqualFold(v, "AzureCLICredential"):
		return fromAzureCLI, true, nil
	case strings.EqualFold(v, "EnvironmentCredential"), strings.EqualFold(v, "WorkloadIdentityCredential"):
		return fromEnvironment, true, nil
	case strings.EqualFold(v, "ManagedIdentityCredential"):
		return fromManagedIdentity, true, nil
	case strings.EqualFold(v, "AzureDeveloperCLICredential"), strings.EqualFold(v, "AzurePowerShellCredential"):
		return 0, false, fmt.Errorf("%s=%s: not supported here (%s)", TokenCredentialsEnv, v, want)
	default:
		return 0, false, fmt.Errorf("%s=%q: %s", TokenCredentialsEnv, v, want)
	}
}

// environmentCredential is the environment's credential; none (nil, nil)
// when it names none, an error when it names one half.
func environmentCredential(getenv func(string) string, hc *http.Client) (*Credential, error) {
	tenant, client := strings.TrimSpace(getenv("AZURE_TENANT_ID")), strings.TrimSpace(getenv("AZURE_CLIENT_ID"))
	file, secret := strings.TrimSpace(getenv("AZURE_FEDERATED_TOKEN_FILE")), getenv("AZURE_CLIENT_SECRET")
	oidcURL, oidcToken := strings.TrimSpace(getenv("ACTIONS_ID_TOKEN_REQUEST_URL")), strings.TrimSpace(getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN"))
	github := oidcURL != "" && oidcToken != ""
	if file == "" && secret == "" && (!github || (tenant == "" && client == "")) {
		// GitHub's OIDC endpoint alone is no Azure credential: every job
		// with id-token: write has it, for AWS or Google too.
		return nil, nil
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
	co := clientOptions(getenv, hc)
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
	oidc := githubOIDC{url: oidcURL, token: oidcToken, client: hc}
	cred, err := azidentity.NewClientAssertionCredential(tenant, client, oidc.assertion, &azidentity.ClientAssertionCredentialOptions{ClientOptions: co})
	if err != nil {
		return nil, fmt.Errorf("GitHub OIDC (ACTIONS_ID_TOKEN_REQUEST_URL): %w", err)
	}
	return &Credential{cred, "GitHub OIDC token (ACTIONS_ID_TOKEN_REQUEST_URL) of application " + client}, nil
}

// managedIdentityEndpoint is the variable that names the platform's
// managed identity endpoint, as azidentity reads them; "" for none (IMDS).
func managedIdentityEndpoint(getenv func(string) string) string {
	for _, name := range []string{"IDENTITY_ENDPOINT", "MSI_ENDPOINT"} {
		if strings.TrimSpace(getenv(name)) != "" {
			return name
		}
	}
	return ""
}

// managedIdentity is the machine's managed identity at endpoint (the
// variable that names it; "" for IMDS): user-assigned when
// AZURE_CLIENT_ID names one, as DefaultAzureCredential takes it.
func managedIdentity(getenv func(string) string, hc *http.Client, endpoint string) (*Credential, error) {
	o := &azidentity.ManagedIdentityCredentialOptions{ClientOptions: clientOptions(getenv, hc)}
	where := cmp.Or(endpoint, "IMDS")
	source := "system-assigned managed identity (" + where + ")"
	if id := strings.TrimSpace(getenv("AZURE_CLIENT_ID")); id != "" {
		o.ID = azidentity.ClientID(id)
		source = "user-assigned managed identity " + id + " (AZURE_CLIENT_ID, " + where + ")"
	}
	cred, err := azidentity.NewManagedIdentityCredential(o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return &Credential{cred, source}, nil
}

// azureCLI is the az CLI's signed-in account (account: its name, as
// azureProfile.json says it; "" unknown).
func azureCLI(account string) (*Credential, error) {
	cred, err := azidentity.NewAzureCLICredential(nil)
	if err != nil {
		return nil, fmt.Errorf("the az CLI: %w", err)
	}
	source := "az CLI session"
	if account != "" {
		source += " of " + account
	}
	return &Credential{cred, source + " (az account get-access-token)"}, nil
}

// azSession is the account signed in to the az CLI, as its
// azureProfile.json (in AZURE_CONFIG_DIR, else ~/.azure) lists
// subscriptions: azure/login leaves one, `az logout` an empty list. With
// none, where says what was looked at.
func azSession(getenv func(string) string) (account, where string) {
	dir := strings.TrimSpace(getenv("AZURE_CONFIG_DIR"))
	if dir == "" {
		home := getenv("HOME")
		if goruntime.GOOS == "windows" {
			home = cmp.Or(getenv("USERPROFILE"), home)
		}
		if home == "" {
			return "", "no home directory (HOME) to find ~/.azure in"
		}
		dir = filepath.Join(home, ".azure")
	}
	path := filepath.Join(dir, "azureProfile.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "no account signed in (no " + path + ")"
	}
	var profile struct {
		Subscriptions []struct {
			IsDefault bool `json:"isDefault"`
			User      struct {
				Name string `json:"name"`
			} `json:"user"`
		} `json:"subscriptions"`
	}
	// az writes the file with a byte order mark.
	if json.Unmarshal(bytes.TrimPrefix(data, []byte("\ufeff")), &profile) != nil || len(profile.Subscriptions) == 0 {
		return "", "no account signed in (" + path + " lists none)"
	}
	account = profile.Subscriptions[0].User.Name
	for _, s := range profile.Subscriptions {
		if s.IsDefault {
			account = s.User.Name
		}
	}
	return cmp.Or(account, "an account"), ""
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
// reason, never the secret or assertion; a managed identity endpoint's
// likewise), or the credential's own message (a token file that cannot
// be read, the az CLI's error).
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
	// A managed identity endpoint's answer, quoted in the message
	// ("... The endpoint responded with {"error": ...}").
	if i := strings.Index(msg, `{"error"`); i >= 0 {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.NewDecoder(strings.NewReader(msg[i:])).Decode(&e) == nil && e.Error != "" {
			return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(msg[:i]), ". The endpoint responded with") + ": " + e.Error + ": " + e.Description)
		}
	}
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
