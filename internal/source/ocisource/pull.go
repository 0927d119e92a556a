// Package ocisource pulls a Flux OCIRepository's artifact (flux push
// artifact) into a directory, as source-controller does: the manifest
// spec.ref names (a digest, else the highest tag in a semver range, else
// a tag, else "latest"), its layer spec.layerSelector picks (the first
// by default) extracted, with the revision in source-controller's format
// ("<tag>@sha256:<hex>", "sha256:<hex>"). It speaks to registries through
// go-containerregistry.
package ocisource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
)

// What flux push artifact writes, and the annotations Flux reads.
const (
	// ContentMediaType is the media type of the layer flux push artifact
	// writes: a tar+gzip of the directory pushed.
	ContentMediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
	// ConfigMediaType is its config's media type.
	ConfigMediaType = "application/vnd.cncf.flux.config.v1+json"
	// SourceAnnotation and RevisionAnnotation say where the content comes
	// from (flux push artifact --source, --revision); CreatedAnnotation
	// when it was pushed.
	SourceAnnotation   = "org.opencontainers.image.source"
	RevisionAnnotation = "org.opencontainers.image.revision"
	CreatedAnnotation  = "org.opencontainers.image.created"
)

// Layer operations (spec.layerSelector.operation).
const (
	// OperationExtract extracts the layer's tar+gzip into the directory;
	// spec.ignore and .sourceignore files then apply (source-controller
	// archives the extracted tree with them).
	OperationExtract = "extract"
	// OperationCopy keeps the layer's blob as the artifact itself:
	// source-controller stores it as is and kustomize-controller
	// extracts it, so the tree a Kustomization builds is the blob's,
	// without the ignore rules, and a link in it fails.
	OperationCopy = "copy"
)

// DefaultTag is the tag pulled when spec.ref names nothing.
const DefaultTag = "latest"

// Ref is an OCIRepository's spec.ref: Digest wins, then SemVer (the
// highest tag in the range, among tags matching SemVerFilter when set),
// then Tag; none means DefaultTag.
type Ref struct {
	Digest, SemVer, SemVerFilter, Tag string
}

// String names the ref as spec.ref has it, for messages.
func (r Ref) String() string {
	switch {
	case r.Digest != "":
		return "digest " + r.Digest
	case r.SemVer != "" && r.SemVerFilter != "":
		return fmt.Sprintf("semver %s (semverFilter %s)", r.SemVer, r.SemVerFilter)
	case r.SemVer != "":
		return "semver " + r.SemVer
	case r.Tag != "":
		return "tag " + r.Tag
	}
	return "tag " + DefaultTag
}

// LayerSelector is spec.layerSelector: the first layer of MediaType
// (any layer's when empty: the first), and what to do with it
// (Operation, OperationExtract when empty).
type LayerSelector struct {
	MediaType, Operation string
}

// Options say what to pull, and where.
type Options struct {
	// URL is spec.url, oci://host/repository.
	URL string
	Ref Ref
	// Layer is spec.layerSelector.
	Layer LayerSelector
	// Auth is the Secret spec.secretRef names; nil is anonymous.
	Auth *Auth
	// Insecure is spec.insecure: plain HTTP to the registry.
	Insecure bool
	// Ignore is spec.ignore (nil when absent): see fetch.Exclude.
	Ignore *string
	// Dir is the directory the layer is extracted into: it must not
	// exist or be empty.
	Dir string
	// MaxSize bounds the bytes extracted; 0 means DefaultMaxSize.
	MaxSize int64
	// Transport reaches the registry; nil means go-containerregistry's
	// default (the environment's proxy settings, the system's roots).
	// Either way the sources' rules apply (fetch.Transport).
	Transport http.RoundTripper
	// Timeout bounds the pull; 0 means fetch.Timeout.
	Timeout time.Duration
	// Verify, when set, is spec.verify (provider cosign): the artifact
	// must carry a cosign signature one of its keys verifies, or keyless
	// one of its identities signed, or nothing of it is extracted (a
	// *VerifyError).
	Verify *Verification
}

// Artifact is what was pulled.
type Artifact struct {
	// Revision is source-controller's: "<tag>@sha256:<hex>", or
	// "sha256:<hex>" for a digest.
	Revision string
	// Digest is the manifest's.
	Digest string
	// Source and OriginRevision are the manifest's annotations of where
	// the content comes from (flux push artifact --source, --revision),
	// "" when absent; Created when it was pushed (zero when unknown).
	Source, OriginRevision string
	Created                time.Time
	// Skipped are the links the layer held, not extracted.
	Skipped []string
}

// AuthError is a pull the registry refused for want of (right)
// credentials.
type AuthError struct{ Err error }

func (e *AuthError) Error() string { return e.Err.Error() }
func (e *AuthError) Unwrap() error { return e.Err }

// Pull pulls the artifact o names into o.Dir. Errors carry no
// credentials; an *AuthError is the registry refusing them, an
// *ExtractError a layer that does not extract safely (o.Dir is then
// removed).
func Pull(ctx context.Context, o Options) (_ Artifact, err error) {
	op := o.Layer.Operation
	if op == "" {
		op = OperationExtract
	}
	if op != OperationExtract && op != OperationCopy {
		return Artifact{}, fmt.Errorf("spec.layerSelector.operation %q is neither %s nor %s", o.Layer.Operation, OperationExtract, OperationCopy)
	}
	repo, err := Repository(o.URL, o.Insecure)
	if err != nil {
		return Artifact{}, err
	}
	ctx, cancel := fetch.WithTimeout(ctx, o.Timeout)
	defer cancel()
	tr := o.Transport
	if tr == nil {
		tr = remote.DefaultTransport
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(fetch.Transport(tr))}
	if o.Auth != nil {
		opts = append(opts, remote.WithAuthFromKeychain(*o.Auth))
	}
	ref, err := reference(repo, o.Ref, o.Layer.MediaType, opts)
	if err != nil {
		return Artifact{}, o.explain(err)
	}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return Artifact{}, o.explain(err)
	}
	if err := o.Verify.check(ctx, repo, desc.Digest, opts); err != nil {
		return Artifact{}, err
	}
	img, err := desc.Image()
	if err != nil {
		return Artifact{}, o.explain(fmt.Errorf("%s is not an artifact (a manifest of media type %s): %w", ref, desc.MediaType, err))
	}
	manifest, err := img.Manifest()
	if err != nil {
		return Artifact{}, o.explain(err)
	}
	a := Artifact{Digest: desc.Digest.String(), Revision: desc.Digest.String(),
		Source: manifest.Annotations[SourceAnnotation], OriginRevision: manifest.Annotations[RevisionAnnotation]}
	if tag, ok := ref.(name.Tag); ok {
		a.Revision = tag.TagStr() + "@" + a.Digest
	}
	if t, err := time.Parse(time.RFC3339, manifest.Annotations[CreatedAnnotation]); err == nil {
		a.Created = t
	}
	layer, err := selectLayer(img, o.Layer.MediaType)
	if err != nil {
		return Artifact{}, o.explain(err)
	}
	blob, err := layer.Compressed()
	if err != nil {
		return Artifact{}, o.explain(err)
	}
	defer blob.Close()
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return Artifact{}, err
	}
	// Nothing of a failed pull is left to build from.
	defer func() {
		if err != nil {
			os.RemoveAll(o.Dir)
		}
	}()
	max := o.MaxSize
	if max <= 0 {
		max = DefaultMaxSize
	}
	a.Skipped, err = extract(blob, o.Dir, extractOptions{maxSize: max, skipLinks: op == OperationExtract})
	if err != nil {
		var ee *ExtractError
		if errors.As(err, &ee) {
			return Artifact{}, fmt.Errorf("layer %s of %s: %w", mustDigest(layer), a.Revision, err)
		}
		return Artifact{}, o.explain(err)
	}
	// The rest of the blob (a tar's trailing padding) is read, so that
	// go-containerregistry checks the digest of every byte.
	if _, err := io.Copy(io.Discard, blob); err != nil {
		return Artifact{}, o.explain(fmt.Errorf("layer %s of %s: %w", mustDigest(layer), a.Revision, err))
	}
	if op == OperationExtract {
		if err := fetch.Exclude(o.Dir, o.Ignore); err != nil {
			return Artifact{}, err
		}
	}
	return a, nil
}

// Repository is spec.url as a repository: oci://host/path, without a tag
// or digest (spec.ref says which); plain HTTP when insecure.
func Repository(url string, insecure bool) (name.Repository, error) {
	rest, ok := strings.CutPrefix(url, "oci://")
	if !ok {
		return name.Repository{}, fmt.Errorf("spec.url %q is not oci://<host>/<repository>", url)
	}
	if _, path, ok := strings.Cut(rest, "/"); ok && strings.ContainsAny(path, ":@") {
		return name.Repository{}, fmt.Errorf("spec.url %q names a tag or digest: give it in spec.ref", url)
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(rest, opts...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("spec.url %q: %w", url, err)
	}
	return repo, nil
}

// reference is the manifest ref names in repo: a digest, the highest tag
// in a semver range (the registry's tags listed), a tag, or "latest".
func reference(repo name.Repository, ref Ref, mediaType string, opts []remote.Option) (name.Reference, error) {
	switch {
	case ref.Digest != "":
		if _, err := v1.NewHash(ref.Digest); err != nil {
			return nil, fmt.Errorf("spec.ref.digest %q is not sha256:<hex>: %w", ref.Digest, err)
		}
		return repo.Digest(ref.Digest), nil
	case ref.SemVer != "":
		tags, err := remote.List(repo, opts...)
		if err != nil {
			return nil, fmt.Errorf("listing the tags: %w", err)
		}
		tag, err := pickTag(ref, tags, mediaType)
		if err != nil {
			return nil, err
		}
		return repo.Tag(tag), nil
	case ref.Tag != "":
		return repo.Tag(ref.Tag), nil
	}
	return repo.Tag(DefaultTag), nil
}

// ChartMediaType is a Helm chart's layer: Helm writes a version's "+"
// as "_" in a tag, which source-controller reads back when the layer
// selected is a chart's.
const ChartMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

// pickTag is the tag of the highest version in ref.SemVer among tags
// that match ref.SemVerFilter (all when empty), as source-controller
// picks it.
func pickTag(ref Ref, tags []string, mediaType string) (string, error) {
	if mediaType == ChartMediaType {
		versions := make([]string, len(tags))
		for i, t := range tags {
			versions[i] = strings.ReplaceAll(t, "_", "+")
		}
		v, err := pickTag(ref, versions, "")
		return strings.ReplaceAll(v, "+", "_"), err
	}
	all := len(tags)
	if ref.SemVerFilter != "" {
		re, err := regexp.Compile(ref.SemVerFilter)
		if err != nil {
			return "", fmt.Errorf("spec.ref.semverFilter %q is not a regular expression: %w", ref.SemVerFilter, err)
		}
		var kept []string
		for _, t := range tags {
			if re.MatchString(t) {
				kept = append(kept, t)
			}
		}
		tags = kept
	}
	tag, ok, err := fetch.HighestTag(ref.SemVer, tags)
	if err != nil {
		return "", fmt.Errorf("spec.ref.semver %q is not a range: %w", ref.SemVer, err)
	}
	if !ok {
		if ref.SemVerFilter != "" {
			return "", fmt.Errorf("no tag matches semver range %q (%d tags, %d matching semverFilter %q%s)", ref.SemVer, all, len(tags), ref.SemVerFilter, newest(tags))
		}
		return "", fmt.Errorf("no tag matches semver range %q (%d tags%s)", ref.SemVer, all, newest(tags))
	}
	return tag, nil
}

// newest names the five highest versions among tags, for a message:
// ": 2.0.0, 1.1.0, …"; "" when none is a version.
func newest(tags []string) string {
	type version struct {
		tag string
		v   *semver.Version
	}
	var vs []version
	for _, t := range tags {
		if v, err := fetch.ParseVersion(t); err == nil {
			vs = append(vs, version{t, v})
		}
	}
	if len(vs) == 0 {
		return ""
	}
	slices.SortFunc(vs, func(a, b version) int { return b.v.Compare(a.v) })
	var out []string
	for i, v := range vs {
		if i == 5 {
			out = append(out, "…")
			break
		}
		out = append(out, v.tag)
	}
	return ": " + strings.Join(out, ", ")
}

// selectLayer is the first layer of mediaType, or the first layer.
func selectLayer(img v1.Image, mediaType string) (v1.Layer, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	if len(layers) == 0 {
		return nil, errors.New("the artifact has no layer")
	}
	if mediaType == "" {
		return layers[0], nil
	}
	var seen []string
	for _, l := range layers {
		mt, err := l.MediaType()
		if err != nil {
			return nil, err
		}
		if string(mt) == mediaType {
			return l, nil
		}
		seen = append(seen, string(mt))
	}
	return nil, fmt.Errorf("no layer of media type %s (spec.layerSelector.mediaType) in the artifact: its layers are %s", mediaType, strings.Join(seen, ", "))
}

func mustDigest(l v1.Layer) string {
	d, err := l.Digest()
	if err != nil {
		return "?"
	}
	return d.String()
}

// explain makes err say what failed without credentials: the registry
// refusing them is an *AuthError.
func (o Options) explain(err error) error {
	var secrets []string
	how := "no credentials were given (spec.secretRef)"
	if o.Auth != nil {
		secrets, how = o.Auth.Secrets(), "the credentials given for spec.secretRef were refused"
	}
	return explain(err, secrets, how)
}

// explain is err's message without secrets, and without what the
// registry said beyond its status and error codes; a refusal of
// credentials is an *AuthError, its message ending with how.
func explain(err error, secrets []string, how string) error {
	msg := strings.TrimSpace(err.Error())
	var te *transport.Error
	if errors.As(err, &te) {
		// The registry's words (or an internal service's, behind a
		// redirect) are never repeated: the request and its status.
		msg = "the registry answered " + strconv.Itoa(te.StatusCode) + " " + http.StatusText(te.StatusCode)
		if te.Request != nil {
			msg = fetch.Status(te.Request.Method, te.Request.URL, te.StatusCode)
		}
		// The distribution spec's error codes say what is wrong, and are
		// words of a fixed list: those are kept.
		var codes []string
		for _, d := range te.Errors {
			if registryCodes[d.Code] && !slices.Contains(codes, string(d.Code)) {
				codes = append(codes, string(d.Code))
			}
		}
		if len(codes) > 0 {
			msg += " (" + strings.Join(codes, ", ") + ")"
		}
	}
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	if te != nil && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		return &AuthError{Err: &redactedError{msg: msg + ": " + how, err: err}}
	}
	return &redactedError{msg: msg, err: err}
}

// registryCodes are the error codes of the OCI distribution spec.
var registryCodes = map[transport.ErrorCode]bool{
	transport.BlobUnknownErrorCode: true, transport.BlobUploadInvalidErrorCode: true, transport.BlobUploadUnknownErrorCode: true,
	transport.DigestInvalidErrorCode: true, transport.ManifestBlobUnknownErrorCode: true, transport.ManifestInvalidErrorCode: true,
	transport.ManifestUnknownErrorCode: true, transport.ManifestUnverifiedErrorCode: true, transport.NameInvalidErrorCode: true,
	transport.NameUnknownErrorCode: true, transport.SizeInvalidErrorCode: true, transport.TagInvalidErrorCode: true,
	transport.UnauthorizedErrorCode: true, transport.DeniedErrorCode: true, transport.UnsupportedErrorCode: true,
	transport.TooManyRequestsErrorCode: true, transport.UnknownErrorCode: true,
}

// redactedError keeps what err is (errors.Is, errors.As) with its
// message cleaned.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
