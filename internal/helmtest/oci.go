package helmtest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	helmregistry "helm.sh/helm/v4/pkg/registry"
)

// Registry is an in-memory OCI registry on 127.0.0.1, plain HTTP (or
// HTTPS, NewTLSRegistry).
type Registry struct {
	// Host is host:port, as OCI references name it.
	Host string
	// Client trusts an HTTPS registry's certificate; nil for plain HTTP.
	Client *http.Client
	t      *testing.T
	// username and password, when set, are required of every request
	// (basic auth, as ECR's registry takes its token).
	username, password string
}

// NewTLSRegistry serves an empty registry over HTTPS, with a certificate
// only Client trusts, as a registry reached without --plain-http is.
func NewTLSRegistry(t *testing.T) *Registry {
	t.Helper()
	srv := httptest.NewTLSServer(registry.New(registry.Logger(nilLogger())))
	t.Cleanup(srv.Close)
	return &Registry{Host: strings.TrimPrefix(srv.URL, "https://"), Client: srv.Client(), t: t}
}

// NewRegistry serves an empty registry, closed when the test ends.
func NewRegistry(t *testing.T) *Registry {
	return NewRegistryWithAuth(t, "", "")
}

// NewRegistryWithAuth serves an empty registry that answers 401 to any
// request without basic auth username:password (none when empty).
func NewRegistryWithAuth(t *testing.T, username, password string) *Registry {
	t.Helper()
	reg := registry.New(registry.Logger(nilLogger()))
	r := &Registry{t: t, username: username, password: password}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); username != "" && (!ok || u != username || p != password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// Push packages c and pushes it as repository/<chart name>:<version>,
// as `helm push` does, and returns the manifest's digest.
func (r *Registry) Push(repository string, c Chart) string {
	r.t.Helper()
	ch, err := loader.LoadDir(c.Dir)
	if err != nil {
		r.t.Fatalf("chart %s: %v", c.Dir, err)
	}
	if c.Version != "" {
		ch.Metadata.Version = c.Version
	}
	if c.AppVersion != "" {
		ch.Metadata.AppVersion = c.AppVersion
	}
	file, err := chartutil.Save(ch, r.t.TempDir())
	if err != nil {
		r.t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		r.t.Fatal(err)
	}
	opts := []helmregistry.ClientOption{helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptWriter(io.Discard)}
	if r.Client != nil {
		opts = []helmregistry.ClientOption{helmregistry.ClientOptHTTPClient(r.Client), helmregistry.ClientOptWriter(io.Discard)}
	}
	if r.username != "" {
		opts = append(opts, helmregistry.ClientOptBasicAuth(r.username, r.password))
	}
	client, err := helmregistry.NewClient(opts...)
	if err != nil {
		r.t.Fatal(err)
	}
	ref := r.Host + "/" + strings.Trim(repository, "/") + "/" + ch.Name() + ":" + ch.Metadata.Version
	res, err := client.Push(data, ref)
	if err != nil {
		r.t.Fatalf("pushing %s: %v", ref, err)
	}
	return res.Manifest.Digest
}

func nilLogger() *log.Logger { return log.New(io.Discard, "", 0) }
