// Package helmrepo fetches Helm charts from their Flux sources: a
// HelmRepository's HTTP(S) index and archives, and charts in OCI
// registries (a HelmRepository of type oci, an OCIRepository) through
// ocisource, the one OCI client; charts are cached by digest and every
// fetch obeys the sources' rules (source/fetch). The helm package renders
// what it fetches.
package helmrepo

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
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/acr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ecr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gar"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
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

// RepositoryOf is the HelmRepository s (read by config, the one reader
// of Flux sources), HTTP(S) or OCI (type: oci). Cloud providers'
// credentials other than aws's are refused by name.
func RepositoryOf(s *config.Source) (*Repository, error) {
	h := s.Helm
	if h == nil {
		h = &config.HelmSpec{}
	}
	r := &Repository{Name: s.Ref.Name, Namespace: s.Ref.Namespace, URL: s.URL, SecretName: h.SecretName, CertSecretName: h.CertSecretName,
		PassCredentials: h.PassCredentials, Insecure: h.Insecure, OCI: h.OCI}
	switch {
	case len(h.Unsupported) > 0:
		return r, fmt.Errorf("sets %s, which kustomize-deploy does not honour when it fetches a chart", strings.Join(h.Unsupported, ", "))
	case r.OCI != strings.HasPrefix(r.URL, "oci://"):
		return r, fmt.Errorf("spec.url %q: an oci:// URL goes with spec.type oci, and only with it", r.URL)
	case r.OCI:
		r.Provider = h.Provider
		return r, CheckProvider(h.Provider)
	case h.Provider != "" && h.Provider != "generic":
		return r, fmt.Errorf("spec.provider %s: a provider's credentials are for OCI repositories (spec.type oci)", h.Provider)
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
	// Verify is how a chart's cosign signature is verified (spec.verify:
	// a public key, or keyless); nil verifies nothing.
	Verify *ocisource.Verification
}

// ReadCredentials reads a chart source's Secrets as every source's are
// read (fetch.ReadSecret): secretName (basic auth, a docker config, or in
// source-controller's older way the TLS files) and certSecretName
// (ca.crt, tls.crt, tls.key), both in namespace, through lookup (a unit's
// objects, the configuration's files, the cluster).
func ReadCredentials(ctx context.Context, lookup fetch.SecretLookup, namespace, secretName, certSecretName string) (Credentials, error) {
	var c Credentials
	read := func(field, name string) (map[string]string, error) {
		data, found, err := fetch.ReadSecret(ctx, lookup, field, namespace, name)
		switch {
		case err != nil:
			return nil, err
		case !found:
			return nil, fmt.Errorf("%s: Secret %s/%s is not in the unit, the configuration or the cluster", field, namespace, name)
		}
		return data, nil
	}
	if secretName != "" {
		data, err := read("spec.secretRef", secretName)
		if err != nil {
			return c, err
		}
		c.Username, c.Password = data["username"], data["password"]
		c.CA, c.Cert, c.Key = []byte(data["caFile"]), []byte(data["certFile"]), []byte(data["keyFile"])
		c.DockerConfig = []byte(data[".dockerconfigjson"])
	}
	if certSecretName != "" {
		data, err := read("spec.certSecretRef", certSecretName)
		if err != nil {
			return c, err
		}
		c.CA, c.Cert, c.Key = []byte(data["ca.crt"]), []byte(data["tls.crt"]), []byte(data["tls.key"])
	}
	return c, nil
}

// ReadVerification reads spec.verify (provider cosign) of a source in
// namespace as every source's Secrets are read (through lookup): the
// public keys of the Secret spec.verify.secretRef names, or, without
// one, keyless verification of its matchOIDCIdentity against trust.
// Nil v verifies nothing.
func ReadVerification(ctx context.Context, lookup fetch.SecretLookup, namespace string, v *config.Verify, trust ocisource.Sigstore) (*ocisource.Verification, error) {
	if v == nil {
		return nil, nil
	}
	if v.SecretName == "" {
		ids := make([]ocisource.Identity, len(v.MatchOIDCIdentity))
		for i, id := range v.MatchOIDCIdentity {
			ids[i] = ocisource.Identity{Issuer: id.Issuer, Subject: id.Subject}
		}
		if err := ocisource.CheckIdentities(ids); err != nil {
			return nil, err
		}
		return &ocisource.Verification{Keyless: &ocisource.Keyless{Identities: ids, Sigstore: trust}}, nil
	}
	data, found, err := fetch.ReadSecret(ctx, lookup, "spec.verify.secretRef", namespace, v.SecretName)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, &fetch.MissingError{Kind: "Secret", Namespace: namespace, Name: v.SecretName,
			Msg: fmt.Sprintf("spec.verify.secretRef: Secret %s/%s is neither in the unit, the configuration's files nor the cluster", namespace, v.SecretName)}
	}
	keys, err := ocisource.ParseKeys(data)
	if err != nil {
		return nil, fmt.Errorf("spec.verify.secretRef: Secret %s/%s: %w", namespace, v.SecretName, err)
	}
	return &ocisource.Verification{Keys: keys}, nil
}

// CheckProvider refuses the cloud providers whose credentials are not
// read: aws's (ECR), gcp's (Artifact Registry) and azure's (ACR) are.
func CheckProvider(provider string) error {
	switch provider {
	case "", "generic", "aws", "gcp", "azure":
		return nil
	}
	return fmt.Errorf("spec.provider %s: this cloud provider's credentials are not supported yet (aws, gcp and azure are; else use generic with a secretRef)", provider)
}

// Fetcher fetches charts from HTTP(S) repositories, verifies them
// against the index's digest, and caches them by digest.
type Fetcher struct {
	// AWS logs in to the ECR registry host for a source with provider
	// aws (see package ecr); nil refuses such sources.
	// Its host is an ECR registry's, checked before it is called.
	AWS func(ctx context.Context, host string, o ecr.Options) (username, password string, err error)
	// GCP logs in to the Google registry host for a source with
	// provider gcp (see package gar; envOnly offline); nil refuses such
	// sources. Its host is a Google registry's, checked before it is
	// called.
	GCP func(ctx context.Context, host string, envOnly bool) (username, password string, err error)
	// Azure logs in to the Azure Container Registry host for a source
	// with provider azure (see package acr; envOnly offline); nil refuses
	// such sources. Its host is an ACR's, checked before it is called.
	Azure func(ctx context.Context, host string, envOnly bool) (username, password string, err error)
	// Client sends the requests (its transport reaches OCI registries
	// too); nil means the default transport. Its TLS settings are
	// replaced by a repository's own when it has any. Either way the
	// sources' rules apply (fetch.Client): redirects, credentials on a
	// change of origin, bounded responses.
	Client *http.Client
	// Timeout bounds the fetch of one chart (with its index); 0 means
	// fetch.Timeout.
	Timeout time.Duration
	// CacheDir keeps fetched charts, one file per digest; empty caches
	// nothing.
	CacheDir string
	// Sigstore is the trust keyless chart signatures are verified
	// against; the zero value is Sigstore's public good.
	Sigstore ocisource.Sigstore

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
		data, err := get(ctx, client, indexURL, creds, true, maxIndexSize)
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
	ctx, cancel := fetch.WithTimeout(ctx, f.Timeout)
	defer cancel()
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
		if archive, err = get(ctx, client, chartURL, creds, sameHost || r.PassCredentials, ocisource.MaxChartSize); err != nil {
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

// transport is f's client's transport, nil for the default.
func (f *Fetcher) transport() http.RoundTripper {
	if f.Client == nil {
		return nil
	}
	return f.Client.Transport
}

// client is f's client with creds' TLS settings, if any, under the
// sources' rules (fetch.Client).
func (f *Fetcher) client(creds Credentials, insecure bool) (*http.Client, error) {
	c := f.Client
	if c == nil {
		c = &http.Client{}
	}
	if len(creds.CA)+len(creds.Cert) == 0 && !insecure {
		return fetch.Client(c), nil
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
	return fetch.Client(&http.Client{Timeout: c.Timeout, Transport: tr}), nil
}

// maxIndexSize bounds a repository's index (the largest public ones are
// tens of megabytes).
const maxIndexSize = 256 << 20

// get reads u, at most limit bytes, with basic auth when auth and creds
// has a username (never past a redirect to another origin: see
// fetch.CheckRedirect). An error names the URL without credentials,
// and never the body.
func get(ctx context.Context, c *http.Client, u *url.URL, creds Credentials, auth bool, limit int64) ([]byte, error) {
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
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = " (check the HelmRepository's secretRef)"
		}
		return nil, fmt.Errorf("GET %s: %s%s", u.Redacted(), resp.Status, hint)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("GET %s: larger than %d MiB (the limit)", u.Redacted(), limit>>20)
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

// Login gives creds the registry login of a source with provider
// aws (an ECR token), unless its secretRef gave credentials already. The
// token goes to an ECR registry only, as Flux sends it: a URL naming
// any other host is refused before any credential is minted. Offline,
// the login takes only the credentials the environment names.
func Login(ctx context.Context, f *Fetcher, provider, url string, creds Credentials, offline bool) (Credentials, error) {
	if (provider != "aws" && provider != "gcp" && provider != "azure") || creds.Username != "" || len(creds.DockerConfig) > 0 {
		return creds, nil
	}
	host := strings.SplitN(strings.TrimPrefix(url, "oci://"), "/", 2)[0]
	if provider == "azure" {
		if err := acr.CheckHost(host); err != nil {
			return creds, fmt.Errorf("spec.provider azure: %w", err)
		}
		if f.Azure == nil {
			return creds, errors.New("spec.provider azure: no Azure login configured")
		}
		user, pass, err := f.Azure(ctx, host, offline)
		if err != nil {
			return creds, fmt.Errorf("spec.provider azure: %w", err)
		}
		creds.Username, creds.Password = user, pass
		return creds, nil
	}
	if provider == "gcp" {
		if err := gar.CheckHost(host); err != nil {
			return creds, fmt.Errorf("spec.provider gcp: %w", err)
		}
		if f.GCP == nil {
			return creds, errors.New("spec.provider gcp: no Google login configured")
		}
		user, pass, err := f.GCP(ctx, host, offline)
		if err != nil {
			return creds, fmt.Errorf("spec.provider gcp: %w", err)
		}
		creds.Username, creds.Password = user, pass
		return creds, nil
	}
	if _, err := ecr.Region(host); err != nil {
		return creds, fmt.Errorf("spec.provider aws: %w", err)
	}
	if f.AWS == nil {
		return creds, errors.New("spec.provider aws: no AWS login configured")
	}
	user, pass, err := f.AWS(ctx, host, ecr.Options{EnvironmentOnly: offline})
	if err != nil {
		return creds, fmt.Errorf("spec.provider aws: %w", err)
	}
	creds.Username, creds.Password = user, pass
	return creds, nil
}

// Secrets are the credentials' secret parts, to mask: no template sees
// them, but an error might quote them.
func (c Credentials) Secrets() []string {
	return []string{c.Password, string(c.Key), string(c.DockerConfig)}
}
