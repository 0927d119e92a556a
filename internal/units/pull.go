package units

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocisource"
)

// oci resolves an OCIRepository, named in file: pulled once per run into
// the fetcher's scratch directory, unless pulling is off.
func (r *resolver) oci(ctx context.Context, u *config.Unit, ref config.SourceRef, file string) (source, error) {
	if dir, ok := r.mapped[ref]; ok {
		return r.mappedDir(ctx, dir)
	}
	or := r.set.Source(config.OCIRepositoryKind, config.Ref{Namespace: ref.Namespace, Name: ref.Name})
	if slices.Contains(r.set.SyncSources(), ref) {
		// Flux's own sync (a FluxInstance's spec.sync) applies this
		// configuration from the artifact: by its own word, what CI
		// pushes of this repository.
		r.note(ref.String(), fmt.Sprintf("%s is taken as this checkout: Flux's own sync applies this configuration from it (the artifact pushed from this repository)", ref))
		return source{Root: r.root, Checkout: true, Revision: r.revision, RevisionTime: r.revisionTime}, nil
	}
	if or == nil {
		return source{}, &SourceError{Unit: u, Source: ref, Why: fmt.Sprintf(
			"OCIRepository %s/%s is not among the configuration's objects (%s), so which artifact it is cannot be told", ref.Namespace, ref.Name, file)}
	}
	if r.fetcher == nil {
		return source{}, &SourceError{Unit: u, Source: ref, Why: fmt.Sprintf(
			"OCIRepository %s/%s (%s:%d, %s) is not pulled: sources are not fetched (--fetch-sources=false, the action's fetch-sources: false)", ref.Namespace, ref.Name, or.File, or.Line, describe(or))}
	}
	f := r.fetcher
	f.mu.Lock()
	defer f.mu.Unlock()
	got, ok := f.fetched[ref]
	if !ok {
		got, got.err = f.pull(ctx, ref, or)
		if f.fetched == nil {
			f.fetched = map[config.SourceRef]fetchResult{}
		}
		f.fetched[ref] = got
	}
	if got.err != nil {
		return source{}, &SourceError{Unit: u, Source: ref, Why: got.err.Error()}
	}
	r.note("pulled "+ref.String(), fmt.Sprintf("%s (%s:%d) is pulled from %s: revision %s%s", ref, or.File, or.Line, or.URL, got.src.Revision, got.origin))
	return got.src, nil
}

// pull pulls or into the scratch directory. Its errors name the
// OCIRepository, its URL and ref.
func (f *fetcher) pull(ctx context.Context, ref config.SourceRef, or *config.Source) (fetchResult, error) {
	o := or.OCI
	if o == nil {
		o = &config.OCISpec{}
	}
	oref := ocisource.Ref{Digest: o.Digest, SemVer: o.SemVer, SemVerFilter: o.SemVerFilter, Tag: o.Tag}
	where := fmt.Sprintf("OCIRepository %s/%s (%s:%d, %s at %s)", ref.Namespace, ref.Name, or.File, or.Line, or.URL, oref)
	if len(o.Unsupported) > 0 {
		return fetchResult{}, fmt.Errorf("%s sets %s, which kustomize-deploy does not honour when it pulls an artifact", where, strings.Join(o.Unsupported, ", "))
	}
	if or.URL == "" {
		return fetchResult{}, fmt.Errorf("%s has no spec.url", where)
	}
	auth, err := credential(f.ociSecrets, o.SecretName, where, "--oci-secret", "oci-secrets")
	if err != nil {
		return fetchResult{}, err
	}
	po := ocisource.Options{URL: or.URL, Ref: oref, Layer: ocisource.LayerSelector{MediaType: o.MediaType, Operation: o.Operation},
		Insecure: o.Insecure, Ignore: o.Ignore, Auth: auth}
	if err := f.mkScratch(); err != nil {
		return fetchResult{}, err
	}
	// Apart from fetched GitRepositories (scratch/NAMESPACE/NAME): a kind
	// is never a namespace.
	po.Dir = filepath.Join(f.scratch, config.OCIRepositoryKind, ref.Namespace, ref.Name)
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	a, err := ocisource.Pull(ctx, po)
	if err != nil {
		var ae *ocisource.AuthError
		if errors.As(err, &ae) {
			secret := o.SecretName
			if secret == "" {
				secret = "NAME"
			}
			hint := ""
			if o.SecretName == "" {
				hint = " and name it in spec.secretRef"
			}
			return fetchResult{}, fmt.Errorf("pulling %s: %w: give the credentials with --oci-secret %s=FILE (the action's input oci-secrets)%s, a Docker config.json or a Secret of type kubernetes.io/dockerconfigjson", where, err, secret, hint)
		}
		return fetchResult{}, fmt.Errorf("pulling %s: %w", where, err)
	}
	res := fetchResult{src: source{Root: po.Dir, Revision: a.Revision, RevisionTime: a.Created}}
	if a.OriginRevision != "" {
		res.origin = fmt.Sprintf(" (origin revision %s", a.OriginRevision)
		if a.Source != "" {
			res.origin += " of " + a.Source
		}
		res.origin += ")"
	}
	if len(a.Skipped) > 0 {
		res.origin += fmt.Sprintf("; links not extracted, as Flux leaves them out: %s", strings.Join(a.Skipped, ", "))
	}
	return res, nil
}

// mkScratch makes the scratch directory, once.
func (f *fetcher) mkScratch() error {
	if f.scratch != "" {
		return nil
	}
	dir, err := os.MkdirTemp("", "kustomize-deploy-sources-*")
	if err != nil {
		return err
	}
	f.scratch, err = filepath.EvalSymlinks(dir)
	return err
}
