package helm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/registry"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// OCISource is where an OCI chart is: a HelmRepository of type oci (URL
// oci://host/path, the chart's name appended), or an OCIRepository (URL
// oci://host/path/chart) with the reference it pins.
type OCISource struct {
	Kind, Name, Namespace string
	URL                   string
	// Tag, SemVer and Digest are an OCIRepository's spec.ref; Digest wins,
	// then SemVer, then Tag ("latest" when none is set).
	Tag, SemVer, Digest string
	// SecretName holds a docker config (.dockerconfigjson) or a username
	// and password; Insecure talks plain HTTP.
	SecretName string
	Insecure   bool
	// Provider "aws" logs in to ECR (Fetcher.AWS).
	Provider string
}

// ReadOCIRepository reads a Flux OCIRepository holding a chart.
func ReadOCIRepository(u *unstructured.Unstructured) (*OCISource, error) {
	s := &OCISource{Kind: "OCIRepository", Name: u.GetName(), Namespace: or(u.GetNamespace(), "default")}
	s.URL, _, _ = unstructured.NestedString(u.Object, "spec", "url")
	s.Tag, _, _ = unstructured.NestedString(u.Object, "spec", "ref", "tag")
	s.SemVer, _, _ = unstructured.NestedString(u.Object, "spec", "ref", "semver")
	s.Digest, _, _ = unstructured.NestedString(u.Object, "spec", "ref", "digest")
	s.SecretName, _, _ = unstructured.NestedString(u.Object, "spec", "secretRef", "name")
	s.Insecure, _, _ = unstructured.NestedBool(u.Object, "spec", "insecure")
	provider, _, _ := unstructured.NestedString(u.Object, "spec", "provider")
	mediaType, _, _ := unstructured.NestedString(u.Object, "spec", "layerSelector", "mediaType")
	s.Provider = provider
	switch {
	case !strings.HasPrefix(s.URL, "oci://"):
		return s, fmt.Errorf("spec.url %q: want an oci:// URL", s.URL)
	case checkProvider(provider) != nil:
		return s, checkProvider(provider)
	case mediaType != "" && mediaType != registry.ChartLayerMediaType:
		return s, fmt.Errorf("spec.layerSelector.mediaType %s: a HelmRelease's chartRef needs the chart layer (%s)", mediaType, registry.ChartLayerMediaType)
	}
	return s, nil
}

// FetchOCI pulls a chart from an OCI registry: from src with the chart's
// name appended and version resolved among the repository's tags (a
// HelmRepository of type oci), or the artifact src pins (an
// OCIRepository, chart ""). Charts are cached by the digest of their
// archive.
func (f *Fetcher) FetchOCI(ctx context.Context, src *OCISource, creds Credentials, chart, version string) (*Fetched, error) {
	opts := []registry.ClientOption{registry.ClientOptWriter(io.Discard)}
	if hc := f.Client; hc != nil {
		opts = append(opts, registry.ClientOptHTTPClient(hc))
	}
	if src.Insecure {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	host := strings.SplitN(strings.TrimPrefix(src.URL, "oci://"), "/", 2)[0]
	user, pass, err := ociAuth(creds, host)
	if err != nil {
		return nil, err
	}
	if user != "" {
		opts = append(opts, registry.ClientOptBasicAuth(user, pass))
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	ref := strings.TrimSuffix(strings.TrimPrefix(src.URL, "oci://"), "/")
	switch {
	case chart != "":
		ref += "/" + chart
		if version, err = resolveTag(ctx, client, ref, version); err != nil {
			return nil, err
		}
		ref += ":" + strings.ReplaceAll(version, "+", "_")
	case src.Digest != "":
		ref += "@" + src.Digest
	case src.SemVer != "":
		tag, err := resolveTag(ctx, client, ref, src.SemVer)
		if err != nil {
			return nil, err
		}
		ref += ":" + strings.ReplaceAll(tag, "+", "_")
	default:
		ref += ":" + or(src.Tag, "latest")
	}
	pulled, err := pull(ctx, client, ref)
	if err != nil {
		return nil, fmt.Errorf("pulling %s: %w", ref, err)
	}
	archive := pulled.Chart.Data
	sum := sha256.Sum256(archive)
	digest := hex.EncodeToString(sum[:])
	if want := strings.TrimPrefix(pulled.Chart.Digest, "sha256:"); want != "" && want != digest {
		return nil, fmt.Errorf("%s: the chart layer's digest is %s, the manifest says %s", ref, digest, want)
	}
	f.store(digest, archive)
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("the chart at %s does not load: %w", ref, err)
	}
	return &Fetched{Chart: ch, Version: ch.Metadata.Version, Digest: digest, URL: "oci://" + ref}, nil
}

// resolveTag is the newest tag of ref matching the semver range version
// ("" is the latest stable); an exact version is taken as it is.
func resolveTag(ctx context.Context, client *registry.Client, ref, version string) (string, error) {
	if _, err := semver.StrictNewVersion(version); err == nil {
		return version, nil
	}
	tags, err := tagsOf(ctx, client, ref)
	if err != nil {
		return "", fmt.Errorf("listing the tags of %s: %w", ref, err)
	}
	constraint, err := semver.NewConstraint(or(version, "*"))
	if err != nil {
		return "", fmt.Errorf("version %q is not a semver range: %v", version, err)
	}
	for _, t := range tags { // newest first
		if v, err := semver.NewVersion(t); err == nil && constraint.Check(v) {
			return t, nil
		}
	}
	if len(tags) > 5 {
		tags = append(tags[:5], "…")
	}
	return "", fmt.Errorf("%s has no version matching %q (it has %s)", ref, or(version, "*"), or(strings.Join(tags, ", "), "none"))
}

// tagsOf and pull run Helm's registry calls, which take no context, so
// that ctx still ends them for the caller.
func tagsOf(ctx context.Context, client *registry.Client, ref string) ([]string, error) {
	return withContext(ctx, func() ([]string, error) { return client.Tags(ref) })
}

func pull(ctx context.Context, client *registry.Client, ref string) (*registry.PullResult, error) {
	return withContext(ctx, func() (*registry.PullResult, error) { return client.Pull(ref, registry.PullOptWithChart(true)) })
}

func withContext[T any](ctx context.Context, call func() (T, error)) (T, error) {
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := call()
		done <- answer{v, err}
	}()
	select {
	case a := <-done:
		return a.v, a.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// ociAuth is the username and password for host: a docker config's
// entry for it, else the Secret's username and password.
func ociAuth(creds Credentials, host string) (string, string, error) {
	if len(creds.DockerConfig) == 0 {
		return creds.Username, creds.Password, nil
	}
	var cfg struct {
		Auths map[string]struct {
			Username string `json:"username"`
			Password string `json:"password"`
			Auth     string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(creds.DockerConfig, &cfg); err != nil {
		return "", "", errors.New("secretRef: .dockerconfigjson is not a docker config") // not quoted: it holds credentials
	}
	for h, a := range cfg.Auths {
		if strings.TrimPrefix(strings.TrimPrefix(h, "https://"), "http://") != host {
			continue
		}
		if a.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			if u, p, ok := strings.Cut(string(raw), ":"); err == nil && ok {
				return u, p, nil
			}
		}
		return a.Username, a.Password, nil
	}
	return "", "", fmt.Errorf("secretRef: the docker config has no credentials for %s", host)
}
