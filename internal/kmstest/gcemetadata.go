package kmstest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// GCEMetadata is the metadata server of a Compute Engine VM or a GKE node
// (GKE's metadata server, for a pod with Workload Identity), as Google's
// client libraries reach it: plain HTTP at GCE_METADATA_HOST (Host), or
// at 169.254.169.254 through Client. It serves the machine's service
// account — on GKE, the Google service account the pod's Kubernetes
// service account is bound to —
//
//   - /computeMetadata/v1/instance/service-accounts/default/email;
//   - /computeMetadata/v1/instance/service-accounts/default/token, an
//     access token the GCP double issued to "serviceAccount:<email>", so
//     its Cloud KMS and GKE take it;
//
// only to requests with "Metadata-Flavor: Google" and without
// X-Forwarded-For, as the real one, and says "Metadata-Flavor: Google" in
// every answer.
//
// Its requests (Requests, Count) have Target "Metadata.Email" or
// "Metadata.Token", Key the scopes asked for, Principal the account.
type GCEMetadata struct {
	*tlsServer
	// ServiceAccount is the machine's service account's email.
	ServiceAccount string

	gcp *GCP
	requestLog
}

var _ Double = (*GCEMetadata)(nil)

func (m *GCEMetadata) server() *tlsServer { return m.tlsServer }

// GCEMetadataIP is the metadata server's documented address.
const GCEMetadataIP = "169.254.169.254"

// NewGCEMetadata starts the metadata server of a machine whose service
// account is serviceAccount (its tokens issued by g), and closes it when
// the test ends.
func NewGCEMetadata(t testing.TB, g *GCP, serviceAccount string) *GCEMetadata {
	t.Helper()
	m := &GCEMetadata{ServiceAccount: serviceAccount, gcp: g}
	m.tlsServer = newPlainServer(t, http.HandlerFunc(m.serveHTTP), GCEMetadataIP, "metadata.google.internal")
	return m
}

// Host is GCE_METADATA_HOST for the server: 127.0.0.1:<port>.
func (m *GCEMetadata) Host() string { return strings.TrimPrefix(m.srv.URL, "http://") }

func (m *GCEMetadata) serveHTTP(w http.ResponseWriter, r *http.Request) {
	const prefix = "/computeMetadata/v1/instance/service-accounts/default/"
	rec := Request{Target: r.Method + " " + r.URL.Path, Key: r.URL.Query().Get("scopes")}
	defer func() { m.record(rec) }()
	w.Header().Set("Metadata-Flavor", "Google")
	switch {
	case r.Header.Get("Metadata-Flavor") != "Google" || r.Header.Get("X-Forwarded-For") != "":
		rec.Error = "Forbidden"
		http.Error(w, "Missing required header \"Metadata-Flavor\": \"Google\"", http.StatusForbidden)
	case r.Method == http.MethodGet && r.URL.Path == prefix+"email":
		rec.Target, rec.Principal = "Metadata.Email", "serviceAccount:"+m.ServiceAccount
		w.Header().Set("Content-Type", "application/text")
		_, _ = w.Write([]byte(m.ServiceAccount))
	case r.Method == http.MethodGet && r.URL.Path == prefix+"token":
		rec.Target, rec.Principal = "Metadata.Token", "serviceAccount:"+m.ServiceAccount
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"access_token": m.gcp.IssueToken(rec.Principal), "expires_in": 3599, "token_type": "Bearer",
		})
	default:
		rec.Error = "NotFound"
		http.Error(w, "Not Found", http.StatusNotFound)
	}
}
