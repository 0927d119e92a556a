package helmtest

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	helmregistry "helm.sh/helm/v4/pkg/registry"
)

// Registry is an in-memory OCI registry on 127.0.0.1, plain HTTP.
type Registry struct {
	// Host is host:port, as OCI references name it.
	Host string
	t    *testing.T
}

// NewRegistry serves an empty registry, closed when the test ends.
func NewRegistry(t *testing.T) *Registry {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(nilLogger())))
	t.Cleanup(srv.Close)
	return &Registry{Host: strings.TrimPrefix(srv.URL, "http://"), t: t}
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
	client, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptWriter(io.Discard))
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
