package source

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/bucketsource"
)

// bucket resolves a Bucket, named in file: downloaded once per run into
// the fetcher's scratch directory, unless fetching is off.
func (r *Resolver) bucket(ctx context.Context, ref config.SourceRef, file string) (Tree, error) {
	if dir, ok := r.mapped[ref]; ok {
		return r.mappedDir(ctx, dir)
	}
	b := r.set.Source(config.BucketKind, config.Ref{Namespace: ref.Namespace, Name: ref.Name})
	if b == nil {
		return Tree{}, &Error{Source: ref, Fix: FixMapSource, Why: fmt.Sprintf(
			"Bucket %s/%s is not among the configuration's objects (%s), so which bucket it is cannot be told", ref.Namespace, ref.Name, file)}
	}
	if r.fetcher == nil {
		return Tree{}, &Error{Source: ref, Fix: FixFetchSources, Why: fmt.Sprintf(
			"Bucket %s/%s (%s:%d, %s) is not downloaded: fetching sources is off", ref.Namespace, ref.Name, b.File, b.Line, b.URL)}
	}
	got := r.fetcher.once(ref, func() fetchResult {
		src, err := r.fetcher.download(ctx, ref, b)
		return fetchResult{src: src, err: err}
	})
	if got.err != nil {
		return Tree{}, &Error{Source: ref, Why: got.err.Error(), Fix: FixOf(got.err), Err: got.err}
	}
	r.note("downloaded "+ref.String(), fmt.Sprintf("%s (%s:%d) is downloaded from %s: revision %s", ref, b.File, b.Line, b.URL, got.src.Revision))
	return got.src, nil
}

// download downloads Bucket b into the scratch directory. Its errors name
// the Bucket, its file and endpoint.
func (f *fetcher) download(ctx context.Context, ref config.SourceRef, b *config.Source) (Tree, error) {
	s := b.Bucket
	if s == nil {
		s = &config.BucketSpec{}
	}
	where := fmt.Sprintf("Bucket %s/%s (%s:%d, %s)", ref.Namespace, ref.Name, b.File, b.Line, b.URL)
	unsupported := s.Unsupported
	switch s.Provider {
	case "", "generic", "aws":
	default:
		unsupported = append(unsupported, "spec.provider "+s.Provider)
	}
	switch {
	case len(unsupported) > 0:
		return Tree{}, fmt.Errorf("%s sets %s, which kustomize-deploy does not honour when it downloads a bucket", where, strings.Join(unsupported, ", "))
	case s.BucketName == "":
		return Tree{}, fmt.Errorf("%s has no spec.bucketName", where)
	case s.Endpoint == "" && s.Provider != "aws":
		return Tree{}, fmt.Errorf("%s has no spec.endpoint", where)
	}
	auth, err := credential(ctx, f, nil, bucketsource.AuthFromValues, "spec.secretRef", ref.Namespace, s.SecretName, where, "")
	if err != nil {
		return Tree{}, err
	}
	o := bucketsource.Options{Provider: s.Provider, Endpoint: s.Endpoint, Bucket: s.BucketName, Region: s.Region, Prefix: s.Prefix,
		Insecure: s.Insecure, Ignore: s.Ignore, Transport: f.transport, Timeout: f.limit(),
		EnvironmentOnly: f.offline != nil && f.offline()}
	if auth != nil {
		o.AccessKey, o.SecretKey = auth.AccessKey, auth.SecretKey
	}
	if err := f.mkScratch(); err != nil {
		return Tree{}, err
	}
	// Apart from fetched GitRepositories (scratch/NAMESPACE/NAME): a kind
	// is never a namespace.
	o.Dir = filepath.Join(f.scratch, config.BucketKind, ref.Namespace, ref.Name)
	a, err := bucketsource.Download(ctx, o)
	if err != nil {
		return Tree{}, fmt.Errorf("downloading %s: %w", where, err)
	}
	return Tree{Root: o.Dir, Revision: a.Revision}, nil
}
