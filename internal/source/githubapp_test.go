package source

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
)

const appToken0 = "ghs_inst4ll4t10nT0k3n"

// githubAPI serves a GitHub App's API on srv (under /api/v3/, as a GitHub
// Enterprise Server does): the installations of App 42 (installation 7
// on acme) and its installation tokens, each request's JWT checked
// against pub (RS256, issued by the App, not expired). It counts the
// requests.
func githubAPIDouble(t *testing.T, srv *gittest.Server, pub *rsa.PublicKey) *atomic.Int32 {
	var calls atomic.Int32
	srv.Handle("/api/v3/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if err := checkJWT(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), pub); err != "" {
			http.Error(w, `{"message":"`+err+`"}`, http.StatusUnauthorized)
			return
		}
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/v3/app/installations":
			w.Write([]byte(`[{"id": 3, "account": {"login": "someone"}}, {"id": 7, "account": {"login": "Acme"}}]`))
		case r.Method == http.MethodPost && r.URL.Path == "/api/v3/app/installations/7/access_tokens":
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{"token": "` + appToken0 + `", "expires_at": "` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	return &calls
}

// checkJWT says what is wrong with jwt, "" when it is App 42's, signed
// by pub and valid now.
func checkJWT(jwt string, pub *rsa.PublicKey) string {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return "not a JWT"
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "bad signature encoding"
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) != nil {
		return "signature does not verify"
	}
	var h struct{ Alg string }
	if b, _ := base64.RawURLEncoding.DecodeString(parts[0]); json.Unmarshal(b, &h) != nil || h.Alg != "RS256" {
		return "not RS256"
	}
	var c struct {
		Iss      string
		Iat, Exp int64
	}
	if b, _ := base64.RawURLEncoding.DecodeString(parts[1]); json.Unmarshal(b, &c) != nil || c.Iss != "42" {
		return "not issued by the App"
	}
	if now := time.Now().Unix(); c.Iat > now || c.Exp <= now || c.Exp-c.Iat > 600 {
		return "not valid now"
	}
	return ""
}

func rsaKeyPEM(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
}

// A GitRepository with provider github and spec.secretRef holding a
// GitHub App's credentials (Flux's keys) is fetched with an installation
// token minted from the App's JWT, found by installation ID or by owner;
// the key and the token are masked. A repository not on the App's
// server is refused before anything is minted or sent; a key GitHub
// does not take, or a Secret lacking keys, fails by name with no value
// quoted.
func TestResolveGitRepositoryWithGitHubApp(t *testing.T) {
	t.Parallel()
	ghes, elsewhere := gittest.NewServer(t), gittest.NewServer(t)
	key, keyPEM := rsaKeyPEM(t)
	_, otherPEM := rsaKeyPEM(t)
	api := githubAPIDouble(t, ghes, &key.PublicKey)
	ghes.Repo("fleet").Commit("one", map[string]string{"apps/x.yaml": "x: 1\n"})
	ghes.RequireAuth("fleet", "x-access-token", appToken0)
	elsewhere.Repo("fleet").Commit("one", map[string]string{"apps/x.yaml": "x: 1\n"})
	app := func(kv ...string) map[string]string {
		m := map[string]string{"githubAppID": "42", "githubAppPrivateKey": keyPEM, "githubAppBaseURL": ghes.URL + "/api/v3"}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		url    string
		secret map[string]string
		err    string
		calls  int32 // requests to the App's API
	}{
		{name: "by installation ID", url: ghes.URL + "/fleet", secret: app("githubAppInstallationID", "7"), calls: 1},
		{name: "by owner", url: ghes.URL + "/fleet", secret: app("githubAppInstallationOwner", "acme"), calls: 2},
		{name: "a repository elsewhere", url: elsewhere.URL + "/fleet", secret: app("githubAppInstallationID", "7"),
			err: "spec.provider github: the repository is not on the GitHub App's server (" + ghes.URL + "), the only one its token is sent to"},
		{name: "GitHub's App, a repository elsewhere", url: ghes.URL + "/fleet", secret: app("githubAppInstallationID", "7", "githubAppBaseURL", ""),
			err: "the repository is not on the GitHub App's server (https://github.com)"},
		{name: "a key GitHub does not take", url: ghes.URL + "/fleet", secret: app("githubAppInstallationID", "7", "githubAppPrivateKey", otherPEM), calls: 1,
			err: "minting an installation token of the App 42 (installation 7) at " + ghes.URL + "/api/v3: 401 Unauthorized"},
		{name: "an owner it is not installed on", url: ghes.URL + "/fleet", secret: app("githubAppInstallationOwner", "umbrella"), calls: 1,
			err: "the App 42 is not installed on umbrella (githubAppInstallationOwner)"},
		{name: "keys missing", url: ghes.URL + "/fleet", secret: map[string]string{"githubAppID": "x", "githubAppPrivateKey": "nope"},
			err: "githubAppID: want the App's numeric ID\ngithubAppInstallationID (or githubAppInstallationOwner): required\ngithubAppPrivateKey: want a PEM private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, elsewhereBefore := api.Load(), elsewhere.Calls("fleet")
			var masked []string
			lookup := func(_ context.Context, namespace, name string) (map[string]string, bool, error) {
				if namespace == "ns" && name == "app" {
					return tc.secret, true, nil
				}
				return nil, false, nil
			}
			src := &config.Source{Kind: "GitRepository", Ref: config.Ref{Namespace: "ns", Name: "fleet"}, File: "sources.yaml", Line: 4, URL: tc.url,
				Git: &config.GitSpec{Provider: "github", SecretName: "app"}}
			r := NewResolver(Options{Set: &config.Set{Sources: []*config.Source{src}}, Root: t.TempDir(), Fetch: true, Secrets: lookup,
				Mask: func(v []string) { masked = append(masked, v...) }, GitHubToken: "ghs_j0bT0k3n", GitHubServer: "https://github.com"})
			defer r.Close()
			got, err := r.Resolve(t.Context(), &config.Unit{Ref: config.Ref{Namespace: "ns", Name: "apps"}, Path: "apps",
				Source: config.SourceRef{Kind: "GitRepository", Namespace: "ns", Name: "fleet"}})
			if n := api.Load() - before; n != tc.calls {
				t.Errorf("the App's API was sent %d request(s), want %d", n, tc.calls)
			}
			if n := elsewhere.Calls("fleet") - elsewhereBefore; n != 0 {
				t.Errorf("the other server was sent %d request(s)", n)
			}
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got.Checkout || got.Revision == "" {
					t.Errorf("fetched %+v", got)
				}
				if !slices.Contains(masked, appToken0) || !slices.Contains(masked, keyPEM) {
					t.Errorf("the token or the private key is not masked (%d values masked)", len(masked))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			for _, secret := range []string{keyPEM, otherPEM, appToken0, "MII"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error quotes a secret: %v", err)
				}
			}
		})
	}
}
