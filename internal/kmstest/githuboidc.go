package kmstest

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
)

// GitHubOIDC is GitHub Actions' ID token endpoint, as a job with
// "permissions: id-token: write" sees it: ACTIONS_ID_TOKEN_REQUEST_URL
// answers a GET with the request token as bearer and an audience
// parameter with {"value": <OIDC token for that audience>}. Azure's and
// Google's federation (kmstest.Azure.AllowFederated,
// kmstest.GCP.AllowFederation) are told which tokens to trust with
// TokenFor.
//
// Its requests (Requests, Count) have Target "GitHub.IDToken" and Key
// the audience asked for.
type GitHubOIDC struct {
	*tlsServer
	// RequestToken is ACTIONS_ID_TOKEN_REQUEST_TOKEN.
	RequestToken string

	mu     sync.Mutex
	tokens map[string]string // audience → token
	requestLog
}

var _ Double = (*GitHubOIDC)(nil)

func (g *GitHubOIDC) server() *tlsServer { return g.tlsServer }

// GitHubOIDCHost is the host of the double's ID token endpoint.
const GitHubOIDCHost = "pipelines.actions.githubusercontent.com"

// NewGitHubOIDC starts the endpoint and closes it when the test ends.
// Reach it with Client.
func NewGitHubOIDC(t testing.TB) *GitHubOIDC {
	t.Helper()
	g := &GitHubOIDC{
		RequestToken: "kmstest-actions-id-token-request-" + randomString("abcdefghijklmnopqrstuvwxyz0123456789", 24),
		tokens:       map[string]string{},
	}
	g.tlsServer = newTLSServer(t, http.HandlerFunc(g.serveHTTP), GitHubOIDCHost)
	return g
}

// RequestURL is ACTIONS_ID_TOKEN_REQUEST_URL; callers append
// "&audience=...".
func (g *GitHubOIDC) RequestURL() string {
	return "https://" + GitHubOIDCHost + "/kmstest/_apis/distributedtask/hubs/Actions/plans/1/jobs/2/idtoken?api-version=2.0"
}

// Env is the job's environment for the endpoint.
func (g *GitHubOIDC) Env() map[string]string {
	return map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": g.RequestURL(), "ACTIONS_ID_TOKEN_REQUEST_TOKEN": g.RequestToken}
}

// TokenFor is the OIDC token the endpoint hands out for audience (the
// same for every request).
func (g *GitHubOIDC) TokenFor(audience string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	tok, ok := g.tokens[audience]
	if !ok {
		tok = "eyJhbGciOiJSUzI1NiJ9.kmstest-github-oidc-" + randomString("abcdefghijklmnopqrstuvwxyz0123456789", 32)
		g.tokens[audience] = tok
	}
	return tok
}

func (g *GitHubOIDC) serveHTTP(w http.ResponseWriter, r *http.Request) {
	rec := Request{Target: "GitHub.IDToken", Key: r.URL.Query().Get("audience")}
	defer func() {
		g.record(rec)
	}()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method != http.MethodGet || r.URL.Path != "/kmstest/_apis/distributedtask/hubs/Actions/plans/1/jobs/2/idtoken":
		rec.Error = "NotFound"
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": "not found"})
	case r.Header.Get("Authorization") != "Bearer "+g.RequestToken:
		rec.Error = "Unauthorized"
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": "TF400813: The user is not authorized to access this resource."})
	default:
		_ = json.NewEncoder(w).Encode(map[string]string{"value": g.TokenFor(rec.Key)})
	}
}
