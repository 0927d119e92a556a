package kmstest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// GCP is a Google Cloud double for what Google's Go clients call with
// application default credentials, under Google's host names:
//
//   - oauth2.googleapis.com/token: service-account JWT bearer grants
//     (the JWT's RS256 signature checked against the account's key);
//   - sts.googleapis.com/v1/token: Workload Identity Federation's token
//     exchange of an OIDC token (GitHub's, as google-github-actions/auth
//     writes it to a file) for a federated access token;
//   - iamcredentials.googleapis.com: generateAccessToken, a federated
//     principal impersonating a service account it may impersonate;
//   - cloudkms.googleapis.com: Cloud KMS's REST encrypt and decrypt of
//     symmetric keys, with per-key access for principals;
//   - container.googleapis.com: GKE's clusters.get of registered clusters.
//
// Every access token it issues belongs to a principal ("serviceAccount:…"
// or a federated "principal://…"); Principal tells the principal a token
// belongs to, as a GKE API server's authenticator would ask Google.
//
// Its requests (Requests, Count) have Target "OAuth2.Token", "STS.Token",
// "IAM.GenerateAccessToken", "KMS.Encrypt", "KMS.Decrypt" or
// "GKE.GetCluster"; Principal the caller's, when known.
type GCP struct {
	*tlsServer

	mu          sync.Mutex
	accounts    map[string]*rsa.PublicKey    // service account email → its key
	federation  map[string]map[string]string // audience → subject token → principal
	impersonate map[string]map[string]bool   // service account email → principals allowed
	tokens      map[string]string            // access token → principal
	keys        map[string]*gcpKey           // KMS key resource name → key
	clusters    map[string]gkeCluster        // projects/P/locations/L/clusters/C → cluster
	requestLog
}

type gcpKey struct {
	*key
	users map[string]bool // principals
}

type gkeCluster struct {
	endpoint string // host[:port], no scheme, as GKE answers
	caPEM    []byte
}

var _ Double = (*GCP)(nil)

func (g *GCP) server() *tlsServer { return g.tlsServer }

// The hosts the GCP double serves.
const (
	GoogleOAuth2Host       = "oauth2.googleapis.com"
	GoogleSTSHost          = "sts.googleapis.com"
	GoogleIAMHost          = "iamcredentials.googleapis.com"
	GoogleKMSHost          = "cloudkms.googleapis.com"
	GoogleContainerHost    = "container.googleapis.com"
	googleTokenURL         = "https://" + GoogleOAuth2Host + "/token"
	googleSTSTokenURL      = "https://" + GoogleSTSHost + "/v1/token"
	googleGrantJWTBearer   = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	googleGrantTokenExchng = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// NewGCP starts a GCP double and closes it when the test ends. Reach it
// with Client.
func NewGCP(t testing.TB) *GCP {
	t.Helper()
	g := &GCP{
		accounts:    map[string]*rsa.PublicKey{},
		federation:  map[string]map[string]string{},
		impersonate: map[string]map[string]bool{},
		tokens:      map[string]string{},
		keys:        map[string]*gcpKey{},
		clusters:    map[string]gkeCluster{},
	}
	g.tlsServer = newTLSServer(t, http.HandlerFunc(g.serveHTTP),
		GoogleOAuth2Host, GoogleSTSHost, GoogleIAMHost, GoogleKMSHost, GoogleContainerHost)
	return g
}

// ServiceAccountKey creates a service account and returns its JSON key
// file, as `gcloud iam service-accounts keys create` writes it.
func (g *GCP) ServiceAccountKey(email string) []byte {
	pk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(pk)
	if err != nil {
		panic(err)
	}
	g.mu.Lock()
	g.accounts[email] = &pk.PublicKey
	g.mu.Unlock()
	b, _ := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     "kmstest",
		"private_key_id": randomString("0123456789abcdef", 40),
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   email,
		"client_id":      randomString("0123456789", 21),
		"token_uri":      googleTokenURL,
	})
	return b
}

// AllowFederation lets subjectToken (an OIDC token) be exchanged at STS
// for a token of principal, for the workload identity provider audience
// ("//iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/P/providers/R").
func (g *GCP) AllowFederation(audience, subjectToken, principal string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.federation[audience] == nil {
		g.federation[audience] = map[string]string{}
	}
	g.federation[audience][subjectToken] = principal
}

// AllowImpersonation lets principal get tokens of the service account.
func (g *GCP) AllowImpersonation(serviceAccount, principal string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.impersonate[serviceAccount] == nil {
		g.impersonate[serviceAccount] = map[string]bool{}
	}
	g.impersonate[serviceAccount][principal] = true
}

// ExternalAccount returns a Workload Identity Federation credential
// configuration, as google-github-actions/auth writes it: the OIDC token
// read from tokenFile, exchanged at STS for audience, and, when
// serviceAccount is set, a token of that account.
func ExternalAccount(audience, tokenFile, serviceAccount string) []byte {
	cfg := map[string]any{
		"type":               "external_account",
		"audience":           audience,
		"subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
		"token_url":          googleSTSTokenURL,
		"credential_source":  map[string]string{"file": tokenFile},
	}
	if serviceAccount != "" {
		cfg["service_account_impersonation_url"] = "https://" + GoogleIAMHost + "/v1/projects/-/serviceAccounts/" + serviceAccount + ":generateAccessToken"
	}
	b, _ := json.Marshal(cfg)
	return b
}

// ExternalAccountFromGitHub returns the Workload Identity Federation
// credential configuration google-github-actions/auth writes: the OIDC
// token fetched from the job's ID token endpoint (the double oidc) for
// oidcAudience, with the request token in a header, exchanged at STS
// for audience; with serviceAccount, a token of that account.
func ExternalAccountFromGitHub(audience string, oidc *GitHubOIDC, oidcAudience, serviceAccount string) []byte {
	cfg := map[string]any{
		"type":               "external_account",
		"audience":           audience,
		"subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
		"token_url":          googleSTSTokenURL,
		"credential_source": map[string]any{
			"url":     oidc.RequestURL() + "&audience=" + url.QueryEscape(oidcAudience),
			"headers": map[string]string{"Authorization": "Bearer " + oidc.RequestToken},
			"format":  map[string]string{"type": "json", "subject_token_field_name": "value"},
		},
	}
	if serviceAccount != "" {
		cfg["service_account_impersonation_url"] = "https://" + GoogleIAMHost + "/v1/projects/-/serviceAccounts/" + serviceAccount + ":generateAccessToken"
	}
	b, _ := json.Marshal(cfg)
	return b
}

// IssueToken returns a fresh access token of principal, as
// `gcloud auth print-access-token` prints one.
func (g *GCP) IssueToken(principal string) string {
	tok := "ya29.kmstest-" + randomString("abcdefghijklmnopqrstuvwxyz0123456789", 32)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tokens[tok] = principal
	return tok
}

// Principal returns the principal an access token belongs to.
func (g *GCP) Principal(token string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.tokens[token]
	return p, ok
}

// Tokens returns every access token issued so far, for leak scans.
func (g *GCP) Tokens() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.tokens))
	for tok := range g.tokens {
		out = append(out, tok)
	}
	return out
}

// CreateKey creates a symmetric Cloud KMS key and returns its resource name
// (projects/kmstest/locations/global/keyRings/<ring>/cryptoKeys/<name>).
func (g *GCP) CreateKey(ring, name string) string {
	id := "projects/kmstest/locations/global/keyRings/" + ring + "/cryptoKeys/" + name
	g.mu.Lock()
	defer g.mu.Unlock()
	g.keys[id] = &gcpKey{key: newKey(name), users: map[string]bool{}}
	return id
}

// DeleteKey removes a key.
func (g *GCP) DeleteKey(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.keys, id)
}

// AllowKey lets principal encrypt and decrypt with the key id.
func (g *GCP) AllowKey(id, principal string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.keys[id].users[principal] = true
}

// AddCluster registers a GKE cluster (name projects/P/locations/L/clusters/C)
// whose endpoint is host[:port] and CA caPEM; any authenticated principal
// may get it.
func (g *GCP) AddCluster(name, endpoint string, caPEM []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clusters[name] = gkeCluster{endpoint: endpoint, caPEM: caPEM}
}

// googleError is Google's JSON error.
type googleError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

func (g *GCP) serveHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	var rec Request
	var out any
	var gerr *googleError
	var oauthErr string
	switch {
	case host == GoogleOAuth2Host && r.URL.Path == "/token":
		rec.Target = "OAuth2.Token"
		out, oauthErr = g.oauth2Token(r, &rec)
	case host == GoogleSTSHost && r.URL.Path == "/v1/token":
		rec.Target = "STS.Token"
		out, oauthErr = g.stsToken(r, &rec)
	case host == GoogleIAMHost && strings.HasSuffix(r.URL.Path, ":generateAccessToken"):
		rec.Target = "IAM.GenerateAccessToken"
		out, gerr = g.generateAccessToken(r, &rec)
	case host == GoogleKMSHost && r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/"):
		out, gerr = g.kms(r, &rec)
	case host == GoogleContainerHost && r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/"):
		rec.Target = "GKE.GetCluster"
		out, gerr = g.getCluster(r, &rec)
	default:
		rec.Target = r.Method + " " + host + r.URL.Path
		gerr = &googleError{http.StatusNotFound, "unknown path", "NOT_FOUND"}
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case oauthErr != "":
		rec.Error = oauthErr
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": oauthErr, "error_description": "the credential was refused"})
	case gerr != nil:
		rec.Error = gerr.Status
		w.WriteHeader(gerr.Code)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": gerr})
	default:
		_ = json.NewEncoder(w).Encode(out)
	}
	g.record(rec)
}

func accessTokenResponse(tok string) map[string]any {
	return map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600}
}

// oauth2Token answers a service account's JWT bearer grant.
func (g *GCP) oauth2Token(r *http.Request, rec *Request) (any, string) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != googleGrantJWTBearer {
		return nil, "unsupported_grant_type"
	}
	email, err := g.verifyJWT(r.PostForm.Get("assertion"))
	if err != nil {
		return nil, "invalid_grant"
	}
	rec.Principal = "serviceAccount:" + email
	return accessTokenResponse(g.IssueToken(rec.Principal)), ""
}

// verifyJWT checks a service account's RS256 assertion for the token URL
// and returns the account.
func (g *GCP) verifyJWT(assertion string) (string, error) {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", err
	}
	var claims struct {
		Iss string `json:"iss"`
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", err
	}
	g.mu.Lock()
	pub := g.accounts[claims.Iss]
	g.mu.Unlock()
	if pub == nil || claims.Aud != googleTokenURL || time.Unix(claims.Exp, 0).Before(time.Now()) {
		return "", fmt.Errorf("unknown account, wrong audience or expired")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		return "", err
	}
	return claims.Iss, nil
}

// stsToken answers Workload Identity Federation's token exchange.
func (g *GCP) stsToken(r *http.Request, rec *Request) (any, string) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != googleGrantTokenExchng {
		return nil, "unsupported_grant_type"
	}
	audience := r.PostForm.Get("audience")
	rec.Key = audience
	g.mu.Lock()
	principal, ok := g.federation[audience][r.PostForm.Get("subject_token")]
	g.mu.Unlock()
	if !ok {
		return nil, "invalid_grant"
	}
	rec.Principal = principal
	out := accessTokenResponse(g.IssueToken(principal))
	out["issued_token_type"] = "urn:ietf:params:oauth:token-type:access_token"
	return out, ""
}

// caller is the principal of the request's bearer token.
func (g *GCP) caller(r *http.Request) (string, *googleError) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", &googleError{http.StatusUnauthorized, "Request is missing required authentication credential.", "UNAUTHENTICATED"}
	}
	p, ok := g.Principal(tok)
	if !ok {
		return "", &googleError{http.StatusUnauthorized, "Request had invalid authentication credentials.", "UNAUTHENTICATED"}
	}
	return p, nil
}

// generateAccessToken answers iamcredentials' generateAccessToken.
func (g *GCP) generateAccessToken(r *http.Request, rec *Request) (any, *googleError) {
	caller, gerr := g.caller(r)
	if gerr != nil {
		return nil, gerr
	}
	rec.Principal = caller
	sa := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/projects/-/serviceAccounts/"), ":generateAccessToken")
	rec.Key = sa
	g.mu.Lock()
	allowed := g.impersonate[sa][caller]
	g.mu.Unlock()
	if !allowed {
		return nil, &googleError{http.StatusForbidden, "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).", "PERMISSION_DENIED"}
	}
	return map[string]string{
		"accessToken": g.IssueToken("serviceAccount:" + sa),
		"expireTime":  time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
	}, nil
}

// kms answers POST /v1/<key>:encrypt and :decrypt.
func (g *GCP) kms(r *http.Request, rec *Request) (any, *googleError) {
	name, op, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1/"), ":")
	rec.Target, rec.Key = "KMS."+strings.ToUpper(op[:min(1, len(op))])+op[min(1, len(op)):], name
	if !ok || (op != "encrypt" && op != "decrypt") {
		return nil, &googleError{http.StatusNotFound, "unknown method", "NOT_FOUND"}
	}
	caller, gerr := g.caller(r)
	if gerr != nil {
		return nil, gerr
	}
	rec.Principal = caller
	g.mu.Lock()
	k := g.keys[name]
	g.mu.Unlock()
	if k == nil {
		return nil, &googleError{http.StatusNotFound, "CryptoKey " + name + " not found.", "NOT_FOUND"}
	}
	g.mu.Lock()
	allowed := k.users[caller]
	g.mu.Unlock()
	if !allowed {
		perm := "cloudkms.cryptoKeyVersions.useToDecrypt"
		if op == "encrypt" {
			perm = "cloudkms.cryptoKeyVersions.useToEncrypt"
		}
		return nil, &googleError{http.StatusForbidden, fmt.Sprintf("Permission '%s' denied on resource '%s' (or it may not exist).", perm, name), "PERMISSION_DENIED"}
	}
	var req struct {
		Plaintext  []byte `json:"plaintext"`
		Ciphertext []byte `json:"ciphertext"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		return nil, &googleError{http.StatusBadRequest, "Invalid JSON payload received.", "INVALID_ARGUMENT"}
	}
	if op == "encrypt" {
		return map[string]any{"name": name + "/cryptoKeyVersions/1", "ciphertext": k.seal(req.Plaintext, nil)}, nil
	}
	plain, err := k.open(req.Ciphertext, nil)
	if err != nil {
		return nil, &googleError{http.StatusBadRequest, "Decryption failed: the ciphertext is invalid.", "INVALID_ARGUMENT"}
	}
	return map[string]any{"plaintext": plain}, nil
}

// getCluster answers GKE's clusters.get.
func (g *GCP) getCluster(r *http.Request, rec *Request) (any, *googleError) {
	name, err := url.PathUnescape(strings.TrimPrefix(r.URL.Path, "/v1/"))
	if err != nil {
		return nil, &googleError{http.StatusBadRequest, "bad name", "INVALID_ARGUMENT"}
	}
	rec.Key = name
	caller, gerr := g.caller(r)
	if gerr != nil {
		return nil, gerr
	}
	rec.Principal = caller
	g.mu.Lock()
	c, ok := g.clusters[name]
	g.mu.Unlock()
	if !ok {
		return nil, &googleError{http.StatusNotFound, "Not found: " + name + ".", "NOT_FOUND"}
	}
	short := name[strings.LastIndex(name, "/")+1:]
	return map[string]any{
		"name":       short,
		"selfLink":   "https://" + GoogleContainerHost + "/v1/" + name,
		"endpoint":   c.endpoint,
		"status":     "RUNNING",
		"masterAuth": map[string]string{"clusterCaCertificate": base64.StdEncoding.EncodeToString(c.caPEM)},
	}, nil
}
