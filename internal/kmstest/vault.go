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

// Vault is a HashiCorp Vault double: the transit secrets engine's encrypt
// and decrypt endpoints (PUT or POST /v1/<engine>/encrypt/<key> and
// /v1/<engine>/decrypt/<key>), as the Vault API client sops uses calls
// them, with token authentication (X-Vault-Token, or Authorization:
// Bearer) and a policy per token: which keys it may use. Keys are
// AES-256-GCM keys held in memory; ciphertexts look like Vault's
// ("vault:v1:<base64>"). It answers errors as Vault does: 403 "permission
// denied" for an unknown token or a key the token may not use, 400
// "encryption key not found" for an unknown key.
//
// Its requests (Requests, Count) have Target "Vault.Encrypt" or
// "Vault.Decrypt"; Principal is the token's name, never the token.
type Vault struct {
	*tlsServer
	host string

	mu       sync.Mutex
	keys     map[string]*key            // "engine/name" → key
	tokens   map[string]string          // token → its name
	policies map[string]map[string]bool // token name → "engine/name" it may use
	requestLog
}

var _ Double = (*Vault)(nil)

func (v *Vault) server() *tlsServer { return v.tlsServer }

// NewVault starts a Vault double serving host (e.g. vault.example.test),
// and the aliases, and closes it when the test ends. Reach it with
// Client.
func NewVault(t testing.TB, host string, aliases ...string) *Vault {
	t.Helper()
	v := &Vault{host: host, keys: map[string]*key{}, tokens: map[string]string{}, policies: map[string]map[string]bool{}}
	v.tlsServer = newTLSServer(t, http.HandlerFunc(v.serveHTTP), append([]string{host}, aliases...)...)
	return v
}

// Address is the Vault address as sops records it (VAULT_ADDR's form).
func (v *Vault) Address() string { return "https://" + v.host + ":8200" }

// CreateKey creates the transit key name in the engine mounted at engine
// (e.g. "transit") and returns its URI as `sops --hc-vault-transit` takes
// it: <address>/v1/<engine>/keys/<name>.
func (v *Vault) CreateKey(engine, name string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	id := engine + "/" + name
	v.keys[id] = newKey(id)
	return v.Address() + "/v1/" + engine + "/keys/" + name
}

// DeleteKey removes a transit key: what it encrypted cannot be decrypted.
func (v *Vault) DeleteKey(engine, name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.keys, engine+"/"+name)
}

// AddToken registers a token; name identifies it in Requests.
func (v *Vault) AddToken(name, token string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.tokens[token] = name
	if v.policies[name] == nil {
		v.policies[name] = map[string]bool{}
	}
}

// Allow lets the token named name encrypt and decrypt with engine/key.
func (v *Vault) Allow(name, engine, keyName string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.policies[name][engine+"/"+keyName] = true
}

func (v *Vault) serveHTTP(w http.ResponseWriter, r *http.Request) {
	// /v1/<engine...>/<op>/<key>; the engine may be a nested mount.
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	if !strings.HasPrefix(r.URL.Path, "/v1/") || len(parts) < 3 || (r.Method != http.MethodPut && r.Method != http.MethodPost) {
		vaultError(w, http.StatusNotFound, "unsupported path")
		return
	}
	op, name := parts[len(parts)-2], parts[len(parts)-1]
	engine := strings.Join(parts[:len(parts)-2], "/")
	id := engine + "/" + name
	rec := Request{Target: "Vault." + strings.ToUpper(op[:1]) + op[1:], Key: id}
	status, body := v.transit(r, op, id, &rec)
	v.record(rec)
	if status != http.StatusOK {
		vaultError(w, status, body.(string))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"request_id": randomUUID(), "data": body})
}

func vaultError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string][]string{"errors": {msg}})
}

// transit runs op and returns the status and either the data (200) or the
// error message.
func (v *Vault) transit(r *http.Request, op, id string, rec *Request) (int, any) {
	token := r.Header.Get("X-Vault-Token")
	if token == "" {
		token = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	v.mu.Lock()
	who, known := v.tokens[token]
	allowed := v.policies[who][id]
	k := v.keys[id]
	v.mu.Unlock()
	fail := func(status int, msg string) (int, any) {
		rec.Error = msg
		return status, msg
	}
	if !known {
		return fail(http.StatusForbidden, "permission denied")
	}
	rec.Principal = who
	if !allowed {
		return fail(http.StatusForbidden, "permission denied")
	}
	if k == nil {
		return fail(http.StatusBadRequest, "encryption key not found")
	}
	var req struct {
		Plaintext  string `json:"plaintext"`
		Ciphertext string `json:"ciphertext"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		return fail(http.StatusBadRequest, "error parsing JSON")
	}
	switch op {
	case "encrypt":
		plain, err := base64.StdEncoding.DecodeString(req.Plaintext)
		if err != nil || len(plain) == 0 {
			return fail(http.StatusBadRequest, "failed to base64-decode plaintext")
		}
		return http.StatusOK, map[string]any{"ciphertext": "vault:v1:" + base64.StdEncoding.EncodeToString(k.seal(plain, nil)), "key_version": 1}
	case "decrypt":
		enc, ok := strings.CutPrefix(req.Ciphertext, "vault:v1:")
		blob, err := base64.StdEncoding.DecodeString(enc)
		if !ok || err != nil {
			return fail(http.StatusBadRequest, "invalid ciphertext: no prefix")
		}
		plain, err := k.open(blob, nil)
		if err != nil {
			return fail(http.StatusBadRequest, "cipher: message authentication failed")
		}
		return http.StatusOK, map[string]any{"plaintext": base64.StdEncoding.EncodeToString(plain)}
	}
	return fail(http.StatusMethodNotAllowed, fmt.Sprintf("unsupported operation %q", op))
}
