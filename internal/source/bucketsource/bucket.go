// Package bucketsource downloads a Flux Bucket (S3-compatible storage:
// provider generic or aws) into a directory with aws-sdk-go-v2, as
// source-controller makes its artifact: every object under spec.prefix,
// the ignore rules applied, the revision the digest of the objects'
// index ("sha256:<hex>"). It obeys the sources' rules (source/fetch):
// a deadline, bounded objects and bytes, no redirect inward.
package bucketsource

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithy "github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
)

// Limits bound a download.
type Limits struct {
	// Objects bounds the objects downloaded; Bytes their bytes summed,
	// ObjectBytes one's.
	Objects            int
	Bytes, ObjectBytes int64
}

// DefaultLimits are a Git tree's (see gitsource.DefaultLimits).
var DefaultLimits = Limits{Objects: 100_000, Bytes: 256 << 20, ObjectBytes: 64 << 20}

// Auth is what a Bucket's spec.secretRef Secret holds: accesskey and
// secretkey, as source-controller reads it for S3-compatible storage.
type Auth struct{ AccessKey, SecretKey string }

// Secrets are the values of a never to show.
func (a Auth) Secrets() []string {
	if a.SecretKey == "" {
		return nil
	}
	return []string{a.SecretKey}
}

// AuthFromValues reads a Secret's data (decoded) as a Bucket's
// credentials; keys it does not know are refused by name.
func AuthFromValues(values map[string]string) (Auth, error) {
	var a Auth
	var unknown []string
	for k, v := range values {
		switch k {
		case "accesskey":
			a.AccessKey = v
		case "secretkey":
			a.SecretKey = v
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return a, fmt.Errorf("keys %s are not read: a Bucket's Secret holds accesskey and secretkey", strings.Join(unknown, ", "))
	}
	return a, nil
}

// Options say what to download, and where.
type Options struct {
	// Provider is spec.provider: "generic" (or "") takes the Secret's
	// keys; "aws" takes them too, else the AWS SDK's credentials.
	Provider string
	// Endpoint is spec.endpoint (host[:port]); Bucket spec.bucketName;
	// Region spec.region; Prefix spec.prefix.
	Endpoint, Bucket, Region, Prefix string
	// Insecure is spec.insecure: plain HTTP.
	Insecure bool
	// AccessKey and SecretKey are the Secret's accesskey and secretkey;
	// empty without one.
	AccessKey, SecretKey string
	// EnvironmentOnly, for provider aws without keys, takes only the
	// credentials the environment names (an offline diff).
	EnvironmentOnly bool
	// Ignore is spec.ignore (nil when absent): see fetch.Exclude.
	Ignore *string
	// Dir is the directory the objects are written into: it must not
	// exist or be empty.
	Dir string
	// Limits bound the download (DefaultLimits' for zero fields);
	// Timeout too (fetch.Timeout when 0).
	Limits  Limits
	Timeout time.Duration
	// Transport reaches the endpoint (nil: the default), under the
	// sources' rules.
	Transport http.RoundTripper
}

// Artifact is what was downloaded.
type Artifact struct {
	// Revision is source-controller's: "sha256:<hex>" of the index of
	// the objects' keys and ETags.
	Revision string
	// Objects is how many objects were downloaded.
	Objects int
}

// LimitError is a Bucket over one of its limits: nothing of it is kept.
type LimitError struct {
	Limit string
	Max   int64
	Key   string
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case "objects":
		return fmt.Sprintf("the bucket holds more than %d objects (the limit)", e.Max)
	case "object bytes":
		return fmt.Sprintf("object %s is larger than %d bytes (the limit of one object)", e.Key, e.Max)
	}
	return fmt.Sprintf("the bucket's objects add up to more than %d bytes (the limit), at %s", e.Max, e.Key)
}

// Download downloads the objects o names into o.Dir. Errors name no
// credential and quote no server's words beyond its error code.
func Download(ctx context.Context, o Options) (_ Artifact, err error) {
	lim := o.Limits
	if lim.Objects <= 0 {
		lim.Objects = DefaultLimits.Objects
	}
	if lim.Bytes <= 0 {
		lim.Bytes = DefaultLimits.Bytes
	}
	if lim.ObjectBytes <= 0 {
		lim.ObjectBytes = DefaultLimits.ObjectBytes
	}
	ctx, cancel := fetch.WithTimeout(ctx, o.Timeout)
	defer cancel()
	client, err := newClient(ctx, o)
	if err != nil {
		return Artifact{}, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return Artifact{}, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(o.Dir)
		}
	}()
	type object struct {
		key, etag string
		size      int64
	}
	var objects []object
	var total int64
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(o.Bucket), Prefix: nonEmpty(o.Prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return Artifact{}, explain("listing the bucket's objects", err)
		}
		for _, obj := range page.Contents {
			key := aws.ToString(obj.Key)
			if strings.HasSuffix(key, "/") {
				continue // a "directory"
			}
			size := aws.ToInt64(obj.Size)
			switch {
			case len(objects)+1 > lim.Objects:
				return Artifact{}, &LimitError{Limit: "objects", Max: int64(lim.Objects)}
			case size > lim.ObjectBytes:
				return Artifact{}, &LimitError{Limit: "object bytes", Max: lim.ObjectBytes, Key: key}
			case total+size > lim.Bytes:
				return Artifact{}, &LimitError{Limit: "bytes", Max: lim.Bytes, Key: key}
			}
			total += size
			objects = append(objects, object{key: key, etag: strings.Trim(aws.ToString(obj.ETag), `"`), size: size})
		}
	}
	root, err := os.OpenRoot(o.Dir)
	if err != nil {
		return Artifact{}, err
	}
	defer root.Close()
	slices.SortFunc(objects, func(a, b object) int { return strings.Compare(a.key, b.key) })
	index := sha256.New()
	for _, obj := range objects {
		name, err := entryName(obj.key)
		if err != nil {
			return Artifact{}, err
		}
		if err := download(ctx, client, root, o.Bucket, obj.key, name, lim.ObjectBytes); err != nil {
			return Artifact{}, err
		}
		fmt.Fprintf(index, "%s %s\n", obj.key, obj.etag)
	}
	if err := fetch.Exclude(o.Dir, o.Ignore); err != nil {
		return Artifact{}, err
	}
	return Artifact{Revision: "sha256:" + hex.EncodeToString(index.Sum(nil)), Objects: len(objects)}, nil
}

// download writes object key as name, at most max bytes.
func download(ctx context.Context, client *s3.Client, root *os.Root, bucket, key, name string, max int64) error {
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return explain("object "+key, err)
	}
	defer out.Body.Close()
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("object %s: %w", key, err)
		}
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("object %s: %w", key, err)
	}
	n, err := io.Copy(f, io.LimitReader(out.Body, max+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("object %s: %w", key, err)
	}
	if n > max {
		return &LimitError{Limit: "object bytes", Max: max, Key: key}
	}
	return nil
}

// entryName is an object's key as a path in the directory, refused when
// absolute or climbing out of it.
func entryName(key string) (string, error) {
	switch {
	case strings.Contains(key, `\`):
		return "", fmt.Errorf("object %q: a backslash in a key is refused", key)
	case strings.HasPrefix(key, "/"):
		return "", fmt.Errorf("object %q: an absolute path is refused", key)
	}
	if slices.Contains(strings.Split(key, "/"), "..") {
		return "", fmt.Errorf("object %q: a key climbing out of the bucket's tree (..) is refused", key)
	}
	return path.Clean(key), nil
}

// newClient is an S3 client of o's endpoint and credentials.
func newClient(ctx context.Context, o Options) (*s3.Client, error) {
	scheme := "https://"
	if o.Insecure {
		scheme = "http://"
	}
	httpClient := fetch.Client(&http.Client{Transport: o.Transport})
	opts := func(so *s3.Options) {
		so.UsePathStyle = true
		so.HTTPClient = httpClient
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(scheme + strings.TrimSuffix(o.Endpoint, "/"))
		}
	}
	region := cmp.Or(o.Region, "us-east-1")
	switch {
	case o.AccessKey != "" || o.SecretKey != "":
		return s3.New(s3.Options{Region: region, Credentials: credentials.NewStaticCredentialsProvider(o.AccessKey, o.SecretKey, "")}, opts), nil
	case o.Provider == "aws":
		loadOpts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(region)}
		if o.EnvironmentOnly {
			loadOpts = append(loadOpts, awsconfig.WithEC2IMDSClientEnableState(imds.ClientDisabled))
		}
		cfg, err := awsconfig.LoadDefaultConfig(ctx, loadOpts...)
		if err != nil {
			return nil, fmt.Errorf("AWS configuration: %w", err)
		}
		return s3.NewFromConfig(cfg, opts), nil
	}
	return s3.New(s3.Options{Region: region, Credentials: aws.AnonymousCredentials{}}, opts), nil
}

// explain is err without what the server said beyond its error code
// and HTTP status.
func explain(what string, err error) error {
	var ae smithy.APIError
	var re *smithyhttp.ResponseError
	switch {
	case errors.As(err, &ae) && errors.As(err, &re):
		return &quietError{msg: fmt.Sprintf("%s: %d %s (%s)", what, re.HTTPStatusCode(), http.StatusText(re.HTTPStatusCode()), ae.ErrorCode()), err: err}
	case errors.As(err, &re):
		return &quietError{msg: fmt.Sprintf("%s: %d %s", what, re.HTTPStatusCode(), http.StatusText(re.HTTPStatusCode())), err: err}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// quietError keeps what err is with its message cut to the status.
type quietError struct {
	msg string
	err error
}

func (e *quietError) Error() string { return e.msg }
func (e *quietError) Unwrap() error { return e.err }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}
