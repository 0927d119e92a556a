package ocisource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
)

// MaxChartSize bounds a chart archive pulled (its layer, compressed): a
// chart is read into memory to be loaded, and the largest charts
// published are a few megabytes.
const MaxChartSize = 32 << 20

// legacyChartMediaType is the chart layer of charts pushed by Helm before
// 3.8, which Helm still reads.
const legacyChartMediaType = "application/tar+gzip"

// ChartOptions say which chart to pull from a registry.
type ChartOptions struct {
	// URL is oci://host/path/chart.
	URL string
	// Ref is the chart's version: a Digest, else a Tag (an exact
	// version), else the highest version in the SemVer range ("" and no
	// tag: the highest stable version). A version's "+" is a tag's "_",
	// as Helm writes it.
	Ref Ref
	// Insecure is plain HTTP.
	Insecure bool
	// Keychain gives the registry's credentials; nil is anonymous.
	Keychain authn.Keychain
	// Transport reaches the registry (go-containerregistry's default when
	// nil), under the sources' rules (fetch.Transport).
	Transport http.RoundTripper
	// Timeout bounds the pull; 0 means fetch.Timeout.
	Timeout time.Duration
	// MaxSize bounds the chart archive; 0 means MaxChartSize.
	MaxSize int64
	// Secrets are values of the credentials never to show.
	Secrets []string
	// Verify, when set, is how the chart's cosign signature is verified
	// (see Options.Verify).
	Verify *Verification
}

// Chart is a chart archive pulled.
type Chart struct {
	// Archive is the chart's .tgz; Digest its SHA-256 (hex).
	Archive []byte
	Digest  string
	// Tag is the tag pulled ("" for a digest), Revision the manifest's
	// "<tag>@sha256:<hex>" (or "sha256:<hex>").
	Tag, Revision string
}

// PullChart pulls the chart o names with go-containerregistry, the one
// OCI client of sources: its manifest, then its chart layer, whose size
// the manifest gives is checked against the limit before a byte is read,
// and whose digest is checked once read. Errors name no credentials and
// quote no registry's answer; an *AuthError is the registry refusing
// them.
func PullChart(ctx context.Context, o ChartOptions) (*Chart, error) {
	ctx, cancel := fetch.WithTimeout(ctx, o.Timeout)
	defer cancel()
	max := o.MaxSize
	if max <= 0 {
		max = MaxChartSize
	}
	repo, err := Repository(o.URL, o.Insecure)
	if err != nil {
		return nil, err
	}
	tr := o.Transport
	if tr == nil {
		tr = remote.DefaultTransport
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(fetch.Transport(tr))}
	if o.Keychain != nil {
		opts = append(opts, remote.WithAuthFromKeychain(o.Keychain))
	}
	explain := chartExplainer(o)
	ref, err := reference(repo, o.Ref, ChartMediaType, opts)
	if err != nil {
		return nil, explain(fmt.Errorf("%s: %w", repo, err))
	}
	img, err := remote.Image(ref, opts...)
	if err != nil {
		return nil, explain(err)
	}
	manifest, err := img.Manifest()
	if err != nil {
		return nil, explain(err)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, explain(err)
	}
	if err := o.Verify.check(ctx, repo, digest, opts); err != nil {
		return nil, err
	}
	out := &Chart{Revision: digest.String()}
	if tag, ok := ref.(name.Tag); ok {
		out.Tag = tag.TagStr()
		out.Revision = out.Tag + "@" + out.Revision
	}
	for _, l := range manifest.Layers {
		if l.MediaType != ChartMediaType && l.MediaType != legacyChartMediaType {
			continue
		}
		if l.Size > max {
			return nil, fmt.Errorf("%s: the chart layer is %d bytes, more than the limit of %d (a chart archive)", ref, l.Size, max)
		}
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			return nil, explain(err)
		}
		blob, err := layer.Compressed()
		if err != nil {
			return nil, explain(err)
		}
		defer blob.Close()
		var buf bytes.Buffer
		n, err := io.Copy(&buf, io.LimitReader(blob, max+1))
		if err != nil {
			return nil, explain(fmt.Errorf("%s: reading the chart layer: %w", ref, err))
		}
		if n > max {
			return nil, fmt.Errorf("%s: the chart layer is more than the limit of %d bytes (a chart archive)", ref, max)
		}
		// Read to the end, so that go-containerregistry checks the digest.
		if _, err := io.Copy(io.Discard, blob); err != nil {
			return nil, explain(fmt.Errorf("%s: the chart layer: %w", ref, err))
		}
		sum := sha256.Sum256(buf.Bytes())
		out.Archive, out.Digest = buf.Bytes(), hex.EncodeToString(sum[:])
		if want := l.Digest.Hex; l.Digest.Algorithm == "sha256" && want != out.Digest {
			return nil, fmt.Errorf("%s: the chart layer's digest is %s, the manifest says %s", ref, out.Digest, want)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s holds no chart layer (%s): not a Helm chart", ref, ChartMediaType)
}

// chartExplainer is explain for a chart's pull: its credentials come
// from a HelmRepository's Secret, a provider's login, or none.
func chartExplainer(o ChartOptions) func(error) error {
	how := "no credentials were given"
	if o.Keychain != nil {
		how = "the credentials given were refused"
	}
	return func(err error) error { return explain(err, o.Secrets, how) }
}
