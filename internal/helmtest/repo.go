// Package helmtest serves Helm chart repositories for tests: an HTTP
// repository on 127.0.0.1 with an index.yaml and packaged charts made
// from chart directories at test time, so no test reaches the network.
package helmtest

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// Chart is a chart to serve: the chart directory Dir packaged as
// Version (its Chart.yaml's version is replaced), with AppVersion when
// set.
type Chart struct {
	Dir        string
	Version    string
	AppVersion string
}

// Repository is an HTTP chart repository.
type Repository struct {
	// URL is the repository's address (http://127.0.0.1:port/charts).
	URL string
	// Username and Password, when set, are required of every request.
	Username, Password string

	t     *testing.T
	dir   string
	index *repo.IndexFile
	mu    sync.Mutex
	// Requests counts the requests served, by path.
	requests map[string]int
	// down answers every request with 503.
	down bool
	// redirects send a path elsewhere (after the auth check).
	redirects map[string]string
}

// NewRepository serves charts, closed when the test ends.
func NewRepository(t *testing.T, charts ...Chart) *Repository {
	t.Helper()
	r := &Repository{t: t, dir: t.TempDir(), index: repo.NewIndexFile(), requests: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/charts"
	for _, c := range charts {
		r.Add(c)
	}
	return r
}

// Add packages c and adds it to the index.
func (r *Repository) Add(c Chart) {
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
	file, err := chartutil.Save(ch, r.dir)
	if err != nil {
		r.t.Fatalf("packaging chart %s: %v", c.Dir, err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		r.t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.index.MustAdd(ch.Metadata, filepath.Base(file), r.URL, hex.EncodeToString(sum[:])); err != nil {
		r.t.Fatal(err)
	}
	r.index.SortEntries()
}

// Corrupt replaces the packaged archive of name at version with other
// bytes, as a tampered or truncated download would be.
func (r *Repository) Corrupt(name, version string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name+"-"+version+".tgz"), []byte("not a chart"), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// Redirect answers requests for name (e.g. "index.yaml", or a chart
// archive's file name) with a redirect to to, once they pass the auth
// check.
func (r *Repository) Redirect(name, to string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.redirects == nil {
		r.redirects = map[string]string{}
	}
	r.redirects[name] = to
}

// Archive is the packaged archive of chart name at version.
func (r *Repository) Archive(name, version string) []byte {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.dir, name+"-"+version+".tgz"))
	if err != nil {
		r.t.Fatal(err)
	}
	return data
}

// SetDown makes the repository answer 503 to everything, or again serve.
func (r *Repository) SetDown(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

// Requests is how many requests were made for path (e.g. "index.yaml",
// or a chart archive's file name).
func (r *Repository) Requests(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[path]
}

func (r *Repository) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name, ok := strings.CutPrefix(req.URL.Path, "/charts/")
	if !ok || strings.Contains(name, "/") {
		http.NotFound(w, req)
		return
	}
	r.requests[name]++
	if r.down {
		http.Error(w, "down for the test", http.StatusServiceUnavailable)
		return
	}
	if r.Username != "" {
		if u, p, ok := req.BasicAuth(); !ok || u != r.Username || p != r.Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	if to, ok := r.redirects[name]; ok {
		http.Redirect(w, req, to, http.StatusFound)
		return
	}
	if name == "index.yaml" {
		data, err := yaml.Marshal(r.index)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(data)
		return
	}
	http.ServeFile(w, req, filepath.Join(r.dir, filepath.Clean(name)))
}
