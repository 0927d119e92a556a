package kmstest

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// AzureIMDS is the managed identity endpoints of an Azure machine, as
// azidentity's ManagedIdentityCredential reaches them, over plain HTTP:
//
//   - IMDS, http://169.254.169.254/metadata/identity/oauth2/token (the
//     header "Metadata: true"; client_id for a user-assigned identity),
//     reached through Client, which sends 169.254.169.254 here;
//   - App Service's (and Container Apps', Functions'): IDENTITY_ENDPOINT
//     with the header X-IDENTITY-HEADER: IDENTITY_HEADER (AppServiceEnv).
//
// Tokens are the Azure double's, issued to the identity's client ID for
// the resource asked for, so its Key Vault and ARM take them. An identity
// the machine does not have is refused as IMDS refuses it (400
// invalid_request "Identity not found").
//
// Its requests (Requests, Count) have Target "IMDS.Token" or
// "AppService.Token", Key the resource, Principal the client ID.
type AzureIMDS struct {
	*tlsServer
	// SystemAssigned is the client ID of the machine's system-assigned
	// identity; "" when it has none.
	SystemAssigned string
	// IdentityHeader is App Service's IDENTITY_HEADER.
	IdentityHeader string

	azure *Azure
	mu    sync.Mutex
	user  map[string]bool // client IDs of user-assigned identities
	requestLog
}

var _ Double = (*AzureIMDS)(nil)

func (m *AzureIMDS) server() *tlsServer { return m.tlsServer }

// AzureIMDSIP is IMDS's address.
const AzureIMDSIP = "169.254.169.254"

// NewAzureIMDS starts the endpoints of a machine with a system-assigned
// identity (its client ID; "" for none) and user-assigned ones, whose
// tokens a issues, and closes them when the test ends. Client reaches
// IMDS at 169.254.169.254 and App Service's endpoint at 127.0.0.1.
func NewAzureIMDS(t testing.TB, a *Azure, systemAssigned string, userAssigned ...string) *AzureIMDS {
	t.Helper()
	m := &AzureIMDS{
		SystemAssigned: systemAssigned,
		IdentityHeader: "kmstest-identity-header-" + randomString("abcdefghijklmnopqrstuvwxyz0123456789", 24),
		azure:          a,
		user:           map[string]bool{},
	}
	for _, id := range userAssigned {
		m.user[id] = true
	}
	m.tlsServer = newPlainServer(t, http.HandlerFunc(m.serveHTTP), AzureIMDSIP, "127.0.0.1")
	return m
}

// AppServiceEnv is what App Service sets for its managed identity:
// IDENTITY_ENDPOINT (this double's /msi/token) and IDENTITY_HEADER.
func (m *AzureIMDS) AppServiceEnv() map[string]string {
	return map[string]string{"IDENTITY_ENDPOINT": m.srv.URL + "/msi/token", "IDENTITY_HEADER": m.IdentityHeader}
}

func (m *AzureIMDS) serveHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	rec := Request{Target: r.Method + " " + r.URL.Path, Key: q.Get("resource")}
	defer func() { m.record(rec) }()
	refuse := func(status int, code, desc string) {
		rec.Error = code
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/metadata/identity/oauth2/token":
		rec.Target = "IMDS.Token"
		if r.Header.Get("Metadata") != "true" {
			refuse(http.StatusBadRequest, "invalid_request", "Required metadata header not specified")
			return
		}
	case r.Method == http.MethodGet && r.URL.Path == "/msi/token":
		rec.Target = "AppService.Token"
		if r.Header.Get("X-IDENTITY-HEADER") != m.IdentityHeader {
			refuse(http.StatusUnauthorized, "invalid_request", "The X-IDENTITY-HEADER is missing or wrong")
			return
		}
	default:
		refuse(http.StatusNotFound, "not_found", "unknown path")
		return
	}
	id := q.Get("client_id")
	m.mu.Lock()
	known := (id == "" && m.SystemAssigned != "") || m.user[id]
	m.mu.Unlock()
	if id == "" {
		id = m.SystemAssigned
	}
	if !known {
		refuse(http.StatusBadRequest, "invalid_request", "Identity not found")
		return
	}
	resource := strings.TrimSuffix(q.Get("resource"), "/")
	if resource == "" {
		refuse(http.StatusBadRequest, "invalid_request", "Required query variable 'resource' is missing")
		return
	}
	rec.Principal = id
	expires := time.Now().Add(24 * time.Hour).Unix()
	writeJSON(w, http.StatusOK, map[string]string{
		"access_token": m.azure.IssueToken(id, resource), "client_id": id,
		"expires_in": "86399", "expires_on": strconv.FormatInt(expires, 10), "ext_expires_in": "86399",
		"not_before": strconv.FormatInt(time.Now().Unix(), 10), "resource": q.Get("resource"), "token_type": "Bearer",
	})
}

// AzCLI writes an az command into a new directory, for PATH: it answers
// `az account get-access-token -o json --resource R [--tenant T]` as the
// az CLI does after azure/login signed clientID in, with a token the
// double issued to clientID for each of audiences, and fails with az's
// message for another resource. Every call appends its arguments to the
// file calls in that directory. It returns the directory.
func (a *Azure) AzCLI(t testing.TB, clientID string, audiences ...string) string {
	t.Helper()
	dir := t.TempDir()
	var cases strings.Builder
	for _, aud := range audiences {
		cases.WriteString("  " + aud + "|" + aud + "/) tok='" + a.IssueToken(clientID, aud) + "' ;;\n")
	}
	expires := time.Now().Add(time.Hour)
	script := `#!/bin/sh
echo "$*" >> '` + filepath.Join(dir, "calls") + `'
[ "$1 $2" = "account get-access-token" ] || { echo "ERROR: kmstest az: unexpected command: $*" >&2; exit 2; }
res=""
while [ $# -gt 0 ]; do
  case "$1" in --resource) res="$2"; shift ;; esac
  shift
done
case "$res" in
` + cases.String() + `  *) echo "ERROR: AADSTS500011: The resource principal named $res was not found in the tenant." >&2; exit 1 ;;
esac
printf '{"accessToken": "%s", "expiresOn": "` + expires.Local().Format("2006-01-02 15:04:05.000000") + `", "expires_on": ` + strconv.FormatInt(expires.Unix(), 10) + `, "subscription": "00000000-0000-0000-0000-000000000000", "tenant": "` + a.Tenant + `", "tokenType": "Bearer"}\n' "$tok"
`
	if err := os.WriteFile(filepath.Join(dir, "az"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// AzLoginHome returns a new home directory whose ~/.azure holds what
// azure/login leaves there after `az login --service-principal`:
// azureProfile.json (written by az with a byte order mark) with the
// application clientID signed in to one subscription of the tenant.
func (a *Azure) AzLoginHome(t testing.TB, clientID string) string {
	t.Helper()
	home := t.TempDir()
	profile := `{"installationId": "` + randomUUID() + `", "subscriptions": [{"id": "00000000-0000-0000-0000-000000000000", "name": "kmstest", "state": "Enabled", ` +
		`"user": {"name": "` + clientID + `", "type": "servicePrincipal"}, "isDefault": true, "tenantId": "` + a.Tenant + `", "environmentName": "AzureCloud", "homeTenantId": "` + a.Tenant + `"}]}`
	if err := os.MkdirAll(filepath.Join(home, ".azure"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".azure", "azureProfile.json"), append([]byte("\ufeff"), profile...), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}
