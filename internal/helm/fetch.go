package helm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Repository is a Flux HelmRepository: an HTTP(S) chart repository.
type Repository struct {
	Name, Namespace string
	URL             string
	// SecretName holds username and password (basic auth), and, in
	// source-controller's older way, the TLS files; CertSecretName holds
	// ca.crt, tls.crt and tls.key. PassCredentials sends the basic auth to
	// chart URLs on other hosts too.
	SecretName, CertSecretName string
	PassCredentials            bool
	Insecure                   bool
	// OCI is a repository of type oci: its URL is oci://host/path and
	// charts are pulled from the registry (see FetchOCI).
	OCI bool
	// Provider is spec.provider of an OCI repository: "aws" logs in to
	// ECR (Fetcher.AWS); "" or generic uses the secretRef.
	Provider string
}

// ReadRepository reads a HelmRepository, HTTP(S) or OCI (type: oci).
// Cloud providers' credentials other than aws's are refused by name.
func ReadRepository(u *unstructured.Unstructured) (*Repository, error) {
	r := &Repository{Name: u.GetName(), Namespace: or(u.GetNamespace(), "default")}
	r.URL, _, _ = unstructured.NestedString(u.Object, "spec", "url")
	r.SecretName, _, _ = unstructured.NestedString(u.Object, "spec", "secretRef", "name")
	r.CertSecretName, _, _ = unstructured.NestedString(u.Object, "spec", "certSecretRef", "name")
	r.PassCredentials, _, _ = unstructured.NestedBool(u.Object, "spec", "passCredentials")
	r.Insecure, _, _ = unstructured.NestedBool(u.Object, "spec", "insecure")
	typ, _, _ := unstructured.NestedString(u.Object, "spec", "type")
	provider, _, _ := unstructured.NestedString(u.Object, "spec", "provider")
	r.OCI = typ == "oci"
	switch {
	case r.OCI != strings.HasPrefix(r.URL, "oci://"):
		return r, fmt.Errorf("spec.url %q: an oci:// URL goes with spec.type oci, and only with it", r.URL)
	case r.OCI:
		r.Provider = provider
		return r, checkProvider(provider)
	case provider != "" && provider != "generic":
		return r, fmt.Errorf("spec.provider %s: a provider's credentials are for OCI repositories (spec.type oci)", provider)
	case r.URL == "":
		return r, errors.New("spec.url: required")
	}
	u2, err := url.Parse(r.URL)
	if err != nil || (u2.Scheme != "http" && u2.Scheme != "https") {
		return r, fmt.Errorf("spec.url %q: want an http(s) URL", r.URL)
	}
	return r, nil
}

// Credentials are what a repository's Secrets hold, resolved by the
// caller (from the unit's objects, the configuration or the cluster).
type Credentials struct {
	Username, Password string
	// CA, Cert and Key are PEM: a CA to trust, and a client certificate.
	CA, Cert, Key []byte
	// DockerConfig is a .dockerconfigjson, for OCI registries.
	DockerConfig []byte
}

// checkProvider refuses the cloud providers whose credentials are not
// read: aws's are (ECR), azure's and gcp's not yet.
func checkProvider(provider string) error {
	switch provider {
	case "", "generic", "aws":
		return nil
	}
	return fmt.Errorf("spec.provider %s: this cloud provider's credentials are not supported yet (aws is; else use generic with a secretRef)", provider)
}

// Fetcher fetches charts from HTTP(S) repositories, verifies them
// against the index's digest, and caches them by digest.
type Fetcher struct {
	// AWS logs in to the ECR registry host for a source with provider
	// aws (see package ecr); nil refuses such sources.
	AWS func(ctx context.Context, host string) (username, password string, err error)
	// Client sends the requests; nil means a client with a 60 s timeout.
	// Its TLS settings are replaced by a repository's own when it has any.
	Client *http.Client
	// CacheDir keeps fetched charts, one file per digest; empty caches
	// nothing.
	CacheDir string

	// indexes are the repository indexes read by this Fetcher, by URL
	// and credentials: a run reads each repository's index once, however
	// many HelmReleases (and units) use it.
	mu      sync.Mutex
	indexes map[string]*indexRead
}

// indexRead is one read of a repository's index, shared by its readers.
type indexRead struct {
	once  sync.Once
	index *repo.IndexFile
	err   error
}

// index reads and parses the index at indexURL once per Fetcher.
func (f *Fetcher) index(ctx context.Context, client *http.Client, indexURL *url.URL, creds Credentials) (*repo.IndexFile, error) {
	sum := sha256.Sum256([]byte(creds.Username + "\x00" + creds.Password + "\x00" + string(creds.CA) + string(creds.Cert)))
	key := indexURL.String() + "#" + hex.EncodeToString(sum[:8])
	f.mu.Lock()
	if f.indexes == nil {
		f.indexes = map[string]*indexRead{}
	}
	read := f.indexes[key]
	if read == nil {
		read = &indexRead{}
		f.indexes[key] = read
	}
	f.mu.Unlock()
	read.once.Do(func() {
		data, err := get(ctx, client, indexURL, creds, true)
		if err != nil {
			read.err = fmt.Errorf("reading the repository's index: %w", err)
			return
		}
		var index repo.IndexFile
		if err := yaml.Unmarshal(data, &index); err != nil {
			read.err = fmt.Errorf("the repository's index (%s) is not an index: %v", indexURL.Redacted(), err)
			return
		}
		index.SortEntries()
		read.index = &index
	})
	return read.index, read.err
}

// Fetched is a chart fetched from a repository.
type Fetched struct {
	Chart *chart.Chart
	// Version is the version the range resolved to; Digest the SHA-256 of
	// the chart archive; URL where it came from.
	Version, Digest, URL string
	// Notes are what the release's notes say of where the chart came
	// from.
	Notes []string
}

// Fetch resolves name at version (a semver range; "" is the latest
// stable) in repository r's index and returns the chart, loaded.
func (f *Fetcher) Fetch(ctx context.Context, r *Repository, creds Credentials, name, version string) (*Fetched, error) {
	client, err := f.client(creds, r.Insecure)
	if err != nil {
		return nil, err
	}
	base, err := url.Parse(strings.TrimSuffix(r.URL, "/") + "/")
	if err != nil {
		return nil, err
	}
	indexURL := base.ResolveReference(&url.URL{Path: "index.yaml"})
	index, err := f.index(ctx, client, indexURL, creds)
	if err != nil {
		return nil, err
	}
	cv, err := index.Get(name, version)
	if err != nil {
		switch {
		case errors.Is(err, repo.ErrNoChartName):
			return nil, fmt.Errorf("the repository has no chart %s", name)
		case version == "":
			return nil, fmt.Errorf("the repository has no stable version of chart %s", name)
		}
		return nil, fmt.Errorf("the repository has no version of chart %s matching %q (it has %s)", name, version, versions(index.Entries[name]))
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("the repository's index gives no URL for chart %s %s", name, cv.Version)
	}
	chartURL, err := base.Parse(cv.URLs[0])
	if err != nil {
		return nil, fmt.Errorf("chart %s %s: URL %q: %v", name, cv.Version, cv.URLs[0], err)
	}
	out := &Fetched{Version: cv.Version, Digest: cv.Digest, URL: chartURL.Redacted()}
	archive := f.cached(cv.Digest)
	if archive == nil {
		// Credentials go to the repository's own host, or anywhere with
		// passCredentials, as Helm does.
		sameHost := chartURL.Host == base.Host
		if archive, err = get(ctx, client, chartURL, creds, sameHost || r.PassCredentials); err != nil {
			return nil, fmt.Errorf("downloading chart %s %s: %w", name, cv.Version, err)
		}
		sum := sha256.Sum256(archive)
		digest := hex.EncodeToString(sum[:])
		if cv.Digest != "" && !strings.EqualFold(cv.Digest, digest) {
			return nil, fmt.Errorf("chart %s %s from %s: its digest is %s, the index says %s", name, cv.Version, out.URL, digest, cv.Digest)
		}
		out.Digest = digest
		f.store(digest, archive)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("chart %s %s from %s does not load: %w", name, cv.Version, out.URL, err)
	}
	out.Chart = ch
	return out, nil
}

func versions(vs repo.ChartVersions) string {
	var out []string
	for i, v := range vs {
		if i == 5 {
			out = append(out, "…")
			break
		}
		out = append(out, v.Version)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// client is f's client with creds' TLS settings, if any.
func (f *Fetcher) client(creds Credentials, insecure bool) (*http.Client, error) {
	c := f.Client
	if c == nil {
		c = &http.Client{Timeout: 60 * time.Second}
	}
	if len(creds.CA)+len(creds.Cert) == 0 && !insecure {
		return c, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} // #nosec G402 -- the HelmRepository asks for it
	if len(creds.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(creds.CA) {
			return nil, errors.New("certSecretRef: ca.crt holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	if len(creds.Cert) > 0 {
		cert, err := tls.X509KeyPair(creds.Cert, creds.Key)
		if err != nil {
			return nil, errors.New("certSecretRef: tls.crt and tls.key are not a certificate and its key")
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if t, ok := c.Transport.(*http.Transport); ok {
		tr = t.Clone()
	}
	tr.TLSClientConfig = cfg
	return &http.Client{Timeout: c.Timeout, Transport: tr}, nil
}

// get reads u, with basic auth when auth and creds has a username. An
// error names the URL without credentials, and never the body.
func get(ctx context.Context, c *http.Client, u *url.URL, creds Credentials, auth bool) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if auth && creds.Username != "" {
		req.SetBasicAuth(creds.Username, creds.Password)
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("GET %s: %v", u.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = " (check the HelmRepository's secretRef)"
		}
		return nil, fmt.Errorf("GET %s: %s%s", u.Redacted(), resp.Status, hint)
	}
	const limit = 256 << 20 // no chart or index is larger
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", u.Redacted(), err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("GET %s: larger than %d MiB", u.Redacted(), limit>>20)
	}
	return data, nil
}

// cached is the archive of digest in the cache, if it is there and whole.
func (f *Fetcher) cached(digest string) []byte {
	if f.CacheDir == "" || digest == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(f.CacheDir, strings.ToLower(digest)+".tgz"))
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(data)
	if !strings.EqualFold(hex.EncodeToString(sum[:]), digest) {
		return nil // a partial or foreign file: fetch again
	}
	return data
}

// store keeps archive in the cache under its digest; failing to is not an
// error (the next run fetches it again).
func (f *Fetcher) store(digest string, archive []byte) {
	if f.CacheDir == "" {
		return
	}
	if err := os.MkdirAll(f.CacheDir, 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(f.CacheDir, ".chart-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(archive)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(f.CacheDir, digest+".tgz"))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
}
