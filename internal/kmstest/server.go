// Package kmstest is an in-process AWS KMS, STS and EKS for tests. It
// speaks the wire protocols the AWS SDK for Go v2 uses — KMS's JSON 1.1
// protocol, STS's query protocol, EKS's REST-JSON — on 127.0.0.1, so code
// under test runs its real AWS client against it by pointing
// AWS_ENDPOINT_URL_KMS, AWS_ENDPOINT_URL_STS and AWS_ENDPOINT_URL_EKS at
// URL (see Setenv).
//
// It is a double, not a mock: keys are real AES-256-GCM keys held in memory,
// the encryption context is bound as additional data, every request must
// carry a valid SigV4 signature from a known access key, and each key has
// its own access rules. What it serves:
//
//   - KMS: Encrypt, Decrypt, GenerateDataKey (symmetric keys only);
//   - STS: AssumeRole (signed), AssumeRoleWithWebIdentity (unsigned, as
//     GitHub's OIDC login uses it) and GetCallerIdentity, signed or
//     presigned (query-string SigV4, as an EKS bearer token is, with its
//     signed x-k8s-aws-id header and X-Amz-Expires checked);
//   - EKS: DescribeCluster of clusters registered with AddCluster.
//
// It has no key policies or grants beyond Allow/AllowRole, no key rotation,
// no multi-region keys and no throttling.
//
// Beside AWS, it has doubles of the other services SOPS keys and clusters
// live in, each speaking the protocol its real client uses, under the real
// host names over HTTPS (see Client): HashiCorp Vault's transit engine
// (NewVault), Google Cloud's token endpoints, Cloud KMS and GKE (NewGCP),
// and Entra ID, Key Vault and AKS (NewAzure); and the machines' own
// credential endpoints, over plain HTTP: the GCE/GKE metadata server
// (NewGCEMetadata), Azure's IMDS and App Service identity endpoint
// (NewAzureIMDS), and an az CLI after azure/login (Azure.AzCLI).
package kmstest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// AccountID is the account every key and role lives in.
	AccountID = "111122223333"
	// Region is the region of every key. Requests may be signed for any
	// region: sops signs for the region in the key's ARN.
	Region = "eu-west-1"
)

// Request is one request the server answered, in arrival order. It never
// holds plaintext or key material.
type Request struct {
	// Target is the KMS operation as sent in X-Amz-Target
	// ("TrentService.Decrypt") or the STS action prefixed with "STS."
	// ("STS.AssumeRole").
	Target string
	// AccessKeyID signed the request; empty for unsigned requests.
	AccessKeyID string
	// Principal is the caller's ARN (an IAM user or an assumed-role
	// session); empty when authentication failed.
	Principal string
	// Key is the ARN of the KMS key used, the role ARN for STS, the
	// x-k8s-aws-id header of a presigned GetCallerIdentity, the cluster
	// name for EKS.
	Key string
	// Error is the error code returned ("AccessDeniedException"); empty on
	// success.
	Error string
}

// Server is a running KMS and STS double. Its methods are safe for
// concurrent use.
type Server struct {
	srv *httptest.Server

	mu        sync.Mutex
	keys      map[string]*key            // by key id (UUID)
	aliases   map[string]string          // "alias/name" → key id
	users     map[string]string          // access key id → secret
	sessions  map[string]*session        // temporary access key id → session
	trust     map[string]map[string]bool // role ARN → access key ids that may assume it
	webTokens map[string]map[string]bool // role ARN → accepted web identity tokens
	clusters  map[string]eksCluster      // EKS cluster name → cluster
	ecrToken  string                     // what ECR's GetAuthorizationToken hands out
	requestLog
}

// principal is an authenticated caller.
type principal struct {
	accessKeyID string
	arn         string
	roleARN     string // set for assumed-role sessions
}

// session is a set of temporary credentials issued by STS.
type session struct {
	secret, token string
	roleARN, arn  string
	expires       time.Time
}

// New starts a server on 127.0.0.1 and closes it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		keys:      map[string]*key{},
		aliases:   map[string]string{},
		users:     map[string]string{},
		sessions:  map[string]*session{},
		trust:     map[string]map[string]bool{},
		webTokens: map[string]map[string]bool{},
		clusters:  map[string]eksCluster{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the endpoint for both KMS and STS.
func (s *Server) URL() string { return s.srv.URL }

// AddUser registers an IAM user's long-term access key. Requests signed
// with an access key the server does not know are rejected.
func (s *Server) AddUser(accessKeyID, secretAccessKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[accessKeyID] = secretAccessKey
}

// CreateKey creates a symmetric key with a fresh random 256-bit master key
// and, if alias is not empty, the alias "alias/<alias>". It returns the
// key's ARN. Nobody may use the key until Allow or AllowRole says so.
func (s *Server) CreateKey(alias string) string {
	k := newKey(randomUUID())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[k.id] = k
	if alias != "" {
		s.aliases["alias/"+strings.TrimPrefix(alias, "alias/")] = k.id
	}
	return k.arn
}

// DeleteKey removes a key and its aliases at once (real KMS waits at least
// seven days): data keys encrypted under it can no longer be decrypted.
func (s *Server) DeleteKey(arn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.lookupKeyLocked(arn)
	if k == nil {
		return
	}
	delete(s.keys, k.id)
	for a, id := range s.aliases {
		if id == k.id {
			delete(s.aliases, a)
		}
	}
}

// Allow lets the holder of accessKeyID (an IAM user, or one assumed-role
// session) encrypt, decrypt and generate data keys with the key arn.
func (s *Server) Allow(arn, accessKeyID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustKeyLocked(arn).users[accessKeyID] = true
}

// AllowRole lets every session of the role roleARN use the key arn.
func (s *Server) AllowRole(arn, roleARN string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustKeyLocked(arn).roles[roleARN] = true
}

// TrustRole restricts who may assume roleARN to the given access key ids,
// like a role's trust policy. A role never named here may be assumed by
// any authenticated caller.
func (s *Server) TrustRole(roleARN string, accessKeyIDs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trust[roleARN] == nil {
		s.trust[roleARN] = map[string]bool{}
	}
	for _, id := range accessKeyIDs {
		s.trust[roleARN][id] = true
	}
}

// AllowWebIdentity lets AssumeRoleWithWebIdentity for roleARN succeed with
// token, as an OIDC trust (GitHub's) would for a valid token.
func (s *Server) AllowWebIdentity(roleARN, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.webTokens[roleARN] == nil {
		s.webTokens[roleARN] = map[string]bool{}
	}
	s.webTokens[roleARN][token] = true
}

// serveHTTP routes a request by protocol: KMS requests name their
// operation in X-Amz-Target, STS requests in the form field Action (or,
// presigned, in the query), EKS requests in the path.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/clusters/"):
		s.serveEKS(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/" && r.URL.Query().Get("Action") != "":
		s.servePresignedSTS(w, r)
	case r.Method != http.MethodPost || r.URL.Path != "/":
		http.Error(w, "not found", http.StatusNotFound)
	case strings.HasPrefix(r.Header.Get("X-Amz-Target"), ecrTarget):
		s.serveECR(w, r, r.Header.Get("X-Amz-Target"))
	case r.Header.Get("X-Amz-Target") != "":
		s.serveKMS(w, r, r.Header.Get("X-Amz-Target"))
	default:
		s.serveSTS(w, r)
	}
}

// mustKeyLocked returns the key arn names, or panics: the test set it up
// wrong.
func (s *Server) mustKeyLocked(arn string) *key {
	k := s.lookupKeyLocked(arn)
	if k == nil {
		panic(fmt.Sprintf("kmstest: no key %q", arn))
	}
	return k
}

// lookupKeyLocked resolves a key id, key ARN, alias name or alias ARN, as
// KMS's KeyId parameter accepts them.
func (s *Server) lookupKeyLocked(keyID string) *key {
	prefix := "arn:aws:kms:" + Region + ":" + AccountID + ":"
	id := strings.TrimPrefix(keyID, prefix)
	if strings.HasPrefix(id, "alias/") {
		id = s.aliases[id]
	}
	return s.keys[strings.TrimPrefix(id, "key/")]
}

func randomUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// randomString returns n characters from alphabet.
func randomString(alphabet string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func requestID() string { return randomUUID() }
