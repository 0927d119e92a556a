package helmrepo

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/authn"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// OCISource is where an OCI chart is: a HelmRepository of type oci (URL
// oci://host/path, the chart's name appended), or an OCIRepository (URL
// oci://host/path/chart) with the reference it pins.
type OCISource struct {
	Kind, Name, Namespace string
	URL                   string
	// Tag, SemVer (among tags matching SemVerFilter) and Digest are an
	// OCIRepository's spec.ref; Digest wins, then SemVer, then Tag
	// ("latest" when none is set).
	Tag, SemVer, SemVerFilter, Digest string
	// SecretName holds a docker config (.dockerconfigjson) or a username
	// and password; Insecure talks plain HTTP.
	SecretName string
	Insecure   bool
	// Provider "aws" logs in to ECR (Fetcher.AWS).
	Provider string
	// Verify is spec.verify (provider cosign): a public key's Secret, or
	// keyless identities.
	Verify *config.Verify
}

// OCISourceOf is the OCIRepository s (read by config, the one reader of
// Flux sources) holding a chart: fields read but not honoured are
// refused by name, as is a layer that is not a chart's.
func OCISourceOf(s *config.Source) (*OCISource, error) {
	o := s.OCI
	if o == nil {
		o = &config.OCISpec{}
	}
	src := &OCISource{Kind: s.Kind, Name: s.Ref.Name, Namespace: s.Ref.Namespace, URL: s.URL,
		Tag: o.Tag, SemVer: o.SemVer, SemVerFilter: o.SemVerFilter, Digest: o.Digest, SecretName: o.SecretName, Insecure: o.Insecure, Provider: o.Provider, Verify: o.Verify}
	switch {
	case len(o.Unsupported) > 0:
		return src, fmt.Errorf("sets %s, which kustomize-deploy does not honour when it pulls a chart", strings.Join(o.Unsupported, ", "))
	case !strings.HasPrefix(s.URL, "oci://"):
		return src, fmt.Errorf("spec.url %q: want an oci:// URL", s.URL)
	case CheckProvider(o.Provider) != nil:
		return src, CheckProvider(o.Provider)
	case o.MediaType != "" && o.MediaType != ocisource.ChartMediaType:
		return src, fmt.Errorf("spec.layerSelector.mediaType %s: a HelmRelease's chartRef needs the chart layer (%s)", o.MediaType, ocisource.ChartMediaType)
	}
	return src, nil
}

// FetchOCI pulls a chart from an OCI registry: from src with the chart's
// name appended and version resolved among the repository's tags (a
// HelmRepository of type oci), or the artifact src pins (an
// OCIRepository, chart ""). It goes through ocisource.PullChart (one OCI
// client for every source): bounded in time (Fetcher.Timeout) and in
// size (the chart layer, ocisource.MaxChartSize). Charts are cached by
// the digest of their archive.
func (f *Fetcher) FetchOCI(ctx context.Context, src *OCISource, creds Credentials, chart, version string) (*Fetched, error) {
	o := ocisource.ChartOptions{URL: strings.TrimSuffix(src.URL, "/"), Insecure: src.Insecure, Transport: f.transport(), Timeout: f.Timeout, Secrets: creds.Secrets(),
		Verify: creds.Verify}
	switch {
	case len(creds.DockerConfig) > 0:
		auth, err := ocisource.ParseAuth(creds.DockerConfig)
		if err != nil {
			return nil, fmt.Errorf("secretRef: %w", err)
		}
		o.Keychain = auth
	case creds.Username != "":
		o.Keychain = basicKeychain{authn.FromConfig(authn.AuthConfig{Username: creds.Username, Password: creds.Password})}
	}
	switch {
	case chart != "":
		o.URL += "/" + chart
		if _, err := semver.StrictNewVersion(version); err == nil {
			o.Ref.Tag = strings.ReplaceAll(version, "+", "_")
		} else {
			o.Ref.SemVer = cmp.Or(version, "*")
		}
	case src.Digest != "":
		o.Ref.Digest = src.Digest
	case src.SemVer != "":
		o.Ref.SemVer, o.Ref.SemVerFilter = src.SemVer, src.SemVerFilter
	default:
		o.Ref.Tag = cmp.Or(src.Tag, "latest")
	}
	pulled, err := ocisource.PullChart(ctx, o)
	if err != nil {
		return nil, err
	}
	f.store(pulled.Digest, pulled.Archive)
	ch, err := loader.LoadArchive(bytes.NewReader(pulled.Archive))
	if err != nil {
		return nil, fmt.Errorf("the chart at %s (%s) does not load: %w", o.URL, pulled.Revision, err)
	}
	from := o.URL + "@" + pulled.Revision
	if pulled.Tag != "" {
		from = o.URL + ":" + pulled.Tag
	}
	return &Fetched{Chart: ch, Version: ch.Metadata.Version, Digest: pulled.Digest, URL: from}, nil
}

// basicKeychain gives one username and password for any registry: the
// HelmRepository's own.
type basicKeychain struct{ auth authn.Authenticator }

func (k basicKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.auth, nil }
