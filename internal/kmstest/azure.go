package kmstest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Azure is an Azure double for what Azure's Go SDK (azidentity, azkeys)
// and ARM clients call, under Azure's host names:
//
//   - login.microsoftonline.com: Entra ID's OpenID configuration, instance
//     discovery and v2.0 token endpoint, for the client credentials grant
//     with a client secret or with a federated client assertion (workload
//     identity: the assertion is the OIDC token in
//     AZURE_FEDERATED_TOKEN_FILE);
//   - <vault>.vault.azure.net: Key Vault's key encrypt and decrypt (and
//     get, for a key named without version), behind Key Vault's bearer
//     challenge, with per-key access for applications;
//   - management.azure.com: AKS managedClusters listClusterUserCredential
//     of registered clusters;
//   - <registry>.azurecr.io: Azure Container Registry's token exchange
//     (POST /oauth2/exchange: an ARM access token for an ACR refresh
//     token, the password of the null-GUID user).
//
// Access tokens are issued for one audience (the scope without
// "/.default") to one application (its client ID); Principal tells which,
// as an AKS API server's authenticator would check them.
//
// Its requests (Requests, Count) have Target "Entra.Token",
// "KeyVault.Encrypt", "KeyVault.Decrypt", "KeyVault.GetKey" or
// "ARM.ListClusterUserCredential" or "ACR.Exchange"; Principal the client
// ID, when known.
type Azure struct {
	*tlsServer
	// Tenant is the only tenant; its apps are registered with AddApp.
	Tenant string

	mu        sync.Mutex
	secrets   map[string]string          // client ID → client secret
	federated map[string]map[string]bool // client ID → accepted assertions
	tokens    map[string]azureToken      // access token → whose, for what
	keys      map[string]*azureKey       // "vault/name" → key
	clusters  map[string]aksCluster      // ARM ID of the cluster → cluster
	clusterOK map[string]map[string]bool // ARM ID → client IDs allowed
	acr       map[string]azureToken      // ACR refresh token → client ID, registry (audience)
	requestLog
}

type azureToken struct{ clientID, audience string }

type azureKey struct {
	*key
	version string
	users   map[string]bool // client IDs
}

type aksCluster struct {
	server string
	caPEM  []byte
	// local: the cluster has local accounts, no Entra ID integration; its
	// user credential is a static token.
	local bool
}

var _ Double = (*Azure)(nil)

func (a *Azure) server() *tlsServer { return a.tlsServer }

// The hosts and audiences of the Azure double.
const (
	AzureLoginHost = "login.microsoftonline.com"
	AzureARMHost   = "management.azure.com"
	// AzureVaultAudience is Key Vault's token audience.
	AzureVaultAudience = "https://vault.azure.net"
	// AzureARMAudience is ARM's.
	AzureARMAudience = "https://management.azure.com"
	// AKSAudience is the AKS AAD server application's, which AKS API
	// servers accept tokens for.
	AKSAudience = "6dae42f8-4368-4678-94ff-3960e28e3630"
)

// NewAzure starts an Azure double and closes it when the test ends. Reach
// it with Client.
func NewAzure(t testing.TB) *Azure {
	t.Helper()
	a := &Azure{
		Tenant:    randomUUID(),
		secrets:   map[string]string{},
		federated: map[string]map[string]bool{},
		tokens:    map[string]azureToken{},
		keys:      map[string]*azureKey{},
		clusters:  map[string]aksCluster{},
		clusterOK: map[string]map[string]bool{},
		acr:       map[string]azureToken{},
	}
	a.tlsServer = newTLSServer(t, http.HandlerFunc(a.serveHTTP), AzureLoginHost, AzureARMHost, "*.vault.azure.net", "*.azurecr.io")
	return a
}

// AddApp registers an application (a service principal) of the tenant
// that authenticates with secret, if not empty; use AllowFederated for
// workload identity.
func (a *Azure) AddApp(clientID, secret string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if secret != "" {
		a.secrets[clientID] = secret
	}
	if a.federated[clientID] == nil {
		a.federated[clientID] = map[string]bool{}
	}
}

// AllowFederated lets the application authenticate with assertion, an
// OIDC token its federated credential trusts (GitHub's, say).
func (a *Azure) AllowFederated(clientID, assertion string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.federated[clientID][assertion] = true
}

// CreateKey creates a key in the vault (its name, e.g. "myvault") and
// returns its vault URL and version, as `sops --azure-kv` takes them
// (<vaultURL>/keys/<name>/<version>).
func (a *Azure) CreateKey(vault, name string) (vaultURL, version string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	version = randomString("0123456789abcdef", 32)
	a.keys[vault+"/"+name] = &azureKey{key: newKey(name), version: version, users: map[string]bool{}}
	return "https://" + vault + ".vault.azure.net", version
}

// DeleteKey removes a key.
func (a *Azure) DeleteKey(vault, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.keys, vault+"/"+name)
}

// AllowKey lets the application encrypt and decrypt with the key.
func (a *Azure) AllowKey(vault, name, clientID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.keys[vault+"/"+name].users[clientID] = true
}

// AddCluster registers an AKS cluster (subscription, resource group,
// name) whose API server is server with CA caPEM, and lets the client IDs
// list its user credentials.
func (a *Azure) AddCluster(subscription, group, name, server string, caPEM []byte, clientIDs ...string) {
	id := strings.ToLower(AKSClusterID(subscription, group, name))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.clusters[id] = aksCluster{server: server, caPEM: caPEM}
	a.clusterOK[id] = map[string]bool{}
	for _, c := range clientIDs {
		a.clusterOK[id][c] = true
	}
}

// UseLocalAccounts makes a registered cluster one without Entra ID
// integration: its user kubeconfig holds a static token, not kubelogin.
func (a *Azure) UseLocalAccounts(subscription, group, name string) {
	id := strings.ToLower(AKSClusterID(subscription, group, name))
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.clusters[id]
	c.local = true
	a.clusters[id] = c
}

// AKSLocalToken is the static token of clusters with local accounts.
const AKSLocalToken = "kmstest-aks-local-account-token-0123456789"

// AKSClusterID is the ARM resource ID of an AKS cluster.
func AKSClusterID(subscription, group, name string) string {
	return "/subscriptions/" + subscription + "/resourceGroups/" + group + "/providers/Microsoft.ContainerService/managedClusters/" + name
}

// IssueToken returns a fresh access token of the application for audience,
// as `az account get-access-token --resource <audience>` prints one.
func (a *Azure) IssueToken(clientID, audience string) string {
	tok := "eyJ0eXAiOiJKV1QifQ.kmstest-" + randomString("abcdefghijklmnopqrstuvwxyz0123456789", 40)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokens[tok] = azureToken{clientID: clientID, audience: audience}
	return tok
}

// ACRPrincipal returns the application an ACR refresh token was
// exchanged for, and the registry it is for.
func (a *Azure) ACRPrincipal(refresh string) (clientID, registry string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.acr[refresh]
	return t.clientID, t.audience, ok
}

// serveACR answers a registry's token exchange as ACR does: an ARM access
// token (access_token) of the tenant for a refresh token of the registry
// (service).
func (a *Azure) serveACR(w http.ResponseWriter, r *http.Request, host string, rec *Request) {
	rec.Target = "ACR.Exchange"
	if r.Method != http.MethodPost || r.URL.Path != "/oauth2/exchange" {
		azureError(w, rec, http.StatusNotFound, "NotFound", "not the token exchange")
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "access_token" || r.PostForm.Get("service") != host {
		azureError(w, rec, http.StatusBadRequest, "BadRequest", "want grant_type access_token and service "+host)
		return
	}
	clientID, aud, ok := a.Principal(r.PostForm.Get("access_token"))
	if !ok || aud != AzureARMAudience {
		azureError(w, rec, http.StatusUnauthorized, "Unauthorized", "not an ARM access token of the tenant")
		return
	}
	rec.Principal = clientID
	refresh := "acr-refresh-" + randomString("abcdefghijklmnopqrstuvwxyz0123456789", 40)
	a.mu.Lock()
	a.acr[refresh] = azureToken{clientID: clientID, audience: host}
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"refresh_token": refresh})
}

// Principal returns the application and the audience of an access token.
func (a *Azure) Principal(token string) (clientID, audience string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.tokens[token]
	return t.clientID, t.audience, ok
}

// Tokens returns every access token issued so far, for leak scans.
func (a *Azure) Tokens() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.tokens))
	for tok := range a.tokens {
		out = append(out, tok)
	}
	return out
}

func (a *Azure) serveHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, _ := strings.Cut(r.Host, ":")
	rec := Request{Target: r.Method + " " + host + r.URL.Path}
	switch {
	case host == AzureLoginHost:
		a.serveLogin(w, r, &rec)
	case strings.HasSuffix(host, ".vault.azure.net"):
		a.serveVault(w, r, strings.TrimSuffix(host, ".vault.azure.net"), &rec)
	case host == AzureARMHost:
		a.serveARM(w, r, &rec)
	case strings.HasSuffix(host, ".azurecr.io"):
		a.serveACR(w, r, host, &rec)
	default:
		azureError(w, &rec, http.StatusNotFound, "NotFound", "unknown host")
	}
	a.record(rec)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// azureError answers as Key Vault and ARM do.
func azureError(w http.ResponseWriter, rec *Request, status int, code, msg string) {
	rec.Error = code
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// serveLogin answers Entra ID: discovery documents and the token endpoint.
func (a *Azure) serveLogin(w http.ResponseWriter, r *http.Request, rec *Request) {
	base := "https://" + AzureLoginHost + "/" + a.Tenant
	switch {
	case r.URL.Path == "/common/discovery/instance":
		writeJSON(w, http.StatusOK, map[string]any{
			"tenant_discovery_endpoint": base + "/v2.0/.well-known/openid-configuration",
			"api-version":               "1.1",
			"metadata": []map[string]any{{
				"preferred_network": AzureLoginHost, "preferred_cache": "login.windows.net",
				"aliases": []string{AzureLoginHost, "login.windows.net"},
			}},
		})
	case r.URL.Path == "/"+a.Tenant+"/v2.0/.well-known/openid-configuration":
		writeJSON(w, http.StatusOK, map[string]any{
			"token_endpoint":                        base + "/oauth2/v2.0/token",
			"authorization_endpoint":                base + "/oauth2/v2.0/authorize",
			"device_authorization_endpoint":         base + "/oauth2/v2.0/devicecode",
			"issuer":                                base + "/v2.0",
			"jwks_uri":                              base + "/discovery/v2.0/keys",
			"response_types_supported":              []string{"code", "id_token", "code id_token", "id_token token"},
			"subject_types_supported":               []string{"pairwise"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	case r.URL.Path == "/"+a.Tenant+"/oauth2/v2.0/token" && r.Method == http.MethodPost:
		rec.Target = "Entra.Token"
		a.token(w, r, rec)
	default:
		rec.Error = "not_found"
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "invalid_request", "error_description": "AADSTS90002: Tenant not found."})
	}
}

// token answers the client credentials grant.
func (a *Azure) token(w http.ResponseWriter, r *http.Request, rec *Request) {
	refuse := func(status int, code, desc string) {
		rec.Error = code
		writeJSON(w, status, map[string]any{"error": code, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		refuse(http.StatusBadRequest, "unsupported_grant_type", "AADSTS70003: the grant type is not supported")
		return
	}
	clientID := r.PostForm.Get("client_id")
	rec.Principal = clientID
	a.mu.Lock()
	secret, hasSecret := a.secrets[clientID]
	assertions, known := a.federated[clientID]
	ok := false
	switch {
	case !known:
	case r.PostForm.Get("client_secret") != "":
		ok = hasSecret && r.PostForm.Get("client_secret") == secret
	case r.PostForm.Get("client_assertion") != "":
		ok = assertions[r.PostForm.Get("client_assertion")]
	}
	a.mu.Unlock()
	switch {
	case !known:
		refuse(http.StatusBadRequest, "unauthorized_client", fmt.Sprintf("AADSTS700016: Application with identifier '%s' was not found in the directory.", clientID))
		return
	case !ok && r.PostForm.Get("client_assertion") != "":
		refuse(http.StatusBadRequest, "invalid_client", "AADSTS70021: No matching federated identity record found for presented assertion.")
		return
	case !ok:
		refuse(http.StatusUnauthorized, "invalid_client", "AADSTS7000215: Invalid client secret provided.")
		return
	}
	var audience string
	for _, s := range strings.Fields(r.PostForm.Get("scope")) {
		if aud, ok := strings.CutSuffix(s, "/.default"); ok {
			audience = aud
		}
	}
	if audience == "" {
		refuse(http.StatusBadRequest, "invalid_scope", "AADSTS1002012: The provided value for scope is not valid.")
		return
	}
	rec.Key = audience
	tok := a.IssueToken(clientID, audience)
	writeJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": tok})
}

// bearer returns the application of the request's token for audience.
func (a *Azure) bearer(r *http.Request, audience string) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", false
	}
	clientID, aud, ok := a.Principal(tok)
	return clientID, ok && aud == audience
}

// serveVault answers Key Vault: /keys/<name>[/<version>][/encrypt|decrypt].
func (a *Azure) serveVault(w http.ResponseWriter, r *http.Request, vault string, rec *Request) {
	clientID, ok := a.bearer(r, AzureVaultAudience)
	if !ok {
		rec.Error = "Unauthorized"
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer authorization="https://%s/%s", resource="%s"`, AzureLoginHost, a.Tenant, AzureVaultAudience))
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]string{"code": "Unauthorized", "message": "AKV10000: Request is missing a Bearer or PoP token."}})
		return
	}
	rec.Principal = clientID
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 2 || parts[0] != "keys" {
		azureError(w, rec, http.StatusNotFound, "NotFound", "unknown path")
		return
	}
	name := parts[1]
	op := "get"
	version := ""
	switch {
	case len(parts) == 4 && (parts[3] == "encrypt" || parts[3] == "decrypt"):
		version, op = parts[2], parts[3]
	case len(parts) == 3:
		version = parts[2]
	}
	rec.Target = "KeyVault." + map[string]string{"get": "GetKey", "encrypt": "Encrypt", "decrypt": "Decrypt"}[op]
	rec.Key = "https://" + vault + ".vault.azure.net/keys/" + name + "/" + version
	a.mu.Lock()
	k := a.keys[vault+"/"+name]
	allowed := k != nil && k.users[clientID]
	a.mu.Unlock()
	if k == nil || (version != "" && version != k.version) {
		azureError(w, rec, http.StatusNotFound, "KeyNotFound", fmt.Sprintf("A key with (name/id) %s was not found in this key vault. If you recently deleted this key you may be able to recover it using the correct recovery command.", name))
		return
	}
	if !allowed {
		azureError(w, rec, http.StatusForbidden, "Forbidden", fmt.Sprintf("The user, group or application 'appid=%s' does not have keys %s permission on key vault '%s'.", clientID, op, vault))
		return
	}
	kid := "https://" + vault + ".vault.azure.net/keys/" + name + "/" + k.version
	if op == "get" {
		writeJSON(w, http.StatusOK, map[string]any{"key": map[string]any{"kid": kid, "kty": "RSA", "key_ops": []string{"encrypt", "decrypt"}}, "attributes": map[string]any{"enabled": true}})
		return
	}
	var req struct {
		Alg   string `json:"alg"`
		Value string `json:"value"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil || req.Alg != "RSA-OAEP-256" {
		azureError(w, rec, http.StatusBadRequest, "BadParameter", "Invalid request body or algorithm.")
		return
	}
	in, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(req.Value, "="))
	if err != nil {
		azureError(w, rec, http.StatusBadRequest, "BadParameter", "Property value has invalid value.")
		return
	}
	var out []byte
	if op == "encrypt" {
		out = k.seal(in, nil)
	} else if out, err = k.open(in, nil); err != nil {
		azureError(w, rec, http.StatusBadRequest, "BadParameter", "Error decrypting the data.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"kid": kid, "value": base64.RawURLEncoding.EncodeToString(out)})
}

// serveARM answers POST <cluster ID>/listClusterUserCredential.
func (a *Azure) serveARM(w http.ResponseWriter, r *http.Request, rec *Request) {
	id, ok := strings.CutSuffix(r.URL.Path, "/listClusterUserCredential")
	if !ok || r.Method != http.MethodPost {
		azureError(w, rec, http.StatusNotFound, "NotFound", "unknown path")
		return
	}
	rec.Target, rec.Key = "ARM.ListClusterUserCredential", id
	clientID, ok := a.bearer(r, AzureARMAudience)
	if !ok {
		azureError(w, rec, http.StatusUnauthorized, "InvalidAuthenticationToken", "The access token is invalid.")
		return
	}
	rec.Principal = clientID
	lower := strings.ToLower(id)
	a.mu.Lock()
	c, exists := a.clusters[lower]
	allowed := a.clusterOK[lower][clientID]
	a.mu.Unlock()
	switch {
	case !exists:
		name := id[strings.LastIndex(id, "/")+1:]
		azureError(w, rec, http.StatusNotFound, "ResourceNotFound", fmt.Sprintf("The Resource 'Microsoft.ContainerService/managedClusters/%s' was not found.", name))
		return
	case !allowed:
		azureError(w, rec, http.StatusForbidden, "AuthorizationFailed", fmt.Sprintf("The client '%s' does not have authorization to perform action 'Microsoft.ContainerService/managedClusters/listClusterUserCredential/action' over scope '%s' or the scope is invalid.", clientID, id))
		return
	}
	// An AAD cluster's user kubeconfig: the user is kubelogin's exec
	// plugin, which the caller is expected to replace; a cluster with
	// local accounts hands out a static token.
	user := fmt.Sprintf(`exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: kubelogin
      args: [get-token, --environment, AzurePublicCloud, --server-id, %s, --login, devicecode]`, AKSAudience)
	if c.local {
		user = "token: " + AKSLocalToken
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: aks
  cluster:
    server: %s
    certificate-authority-data: %s
contexts:
- name: aks
  context: {cluster: aks, user: clusterUser_aks}
current-context: aks
users:
- name: clusterUser_aks
  user:
    %s
`, c.server, base64.StdEncoding.EncodeToString(c.caPEM), user)
	writeJSON(w, http.StatusOK, map[string]any{"kubeconfigs": []map[string]string{{"name": "clusterUser", "value": base64.StdEncoding.EncodeToString([]byte(kubeconfig))}}})
}
