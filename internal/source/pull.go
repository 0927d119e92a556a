package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/acr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ecr"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/gar"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/helmrepo"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/ocisource"
)

// oci resolves an OCIRepository, named in file: pulled once per run into
// the fetcher's scratch directory, unless pulling is off.
func (r *Resolver) oci(ctx context.Context, u *config.Unit, ref config.SourceRef, file string) (Tree, error) {
	if dir, ok := r.mapped[ref]; ok {
		return r.mappedDir(ctx, dir)
	}
	or := r.set.Source(config.OCIRepositoryKind, config.Ref{Namespace: ref.Namespace, Name: ref.Name})
	if slices.Contains(r.set.SyncSources(), ref) {
		// Flux's own sync (a FluxInstance's spec.sync) applies this
		// configuration from the artifact: by its own word, what CI
		// pushes of this repository.
		r.note(ref.String(), fmt.Sprintf("%s is taken as this checkout: Flux's own sync applies this configuration from it (the artifact pushed from this repository)", ref))
		return Tree{Root: r.root, Checkout: true, Revision: r.revision, RevisionTime: r.revisionTime}, nil
	}
	if or == nil {
		return Tree{}, &Error{Source: ref, Why: fmt.Sprintf(
			"OCIRepository %s/%s is not among the configuration's objects (%s), so which artifact it is cannot be told", ref.Namespace, ref.Name, file)}
	}
	if r.fetcher == nil {
		return Tree{}, &Error{Source: ref, Why: fmt.Sprintf(
			"OCIRepository %s/%s (%s:%d, %s) is not pulled: fetching sources is off", ref.Namespace, ref.Name, or.File, or.Line, describe(or)), Fix: FixFetchSources}
	}
	got := r.fetcher.once(ref, func() fetchResult {
		res, err := r.fetcher.pull(ctx, ref, or)
		res.err = err
		return res
	})
	if got.err != nil {
		return Tree{}, &Error{Source: ref, Why: got.err.Error(), Fix: FixOf(got.err), Err: got.err}
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
	unsupported := o.Unsupported
	if o.Provider != "" && o.Provider != "generic" && o.Provider != "aws" && o.Provider != "gcp" && o.Provider != "azure" {
		unsupported = append(slices.Clone(unsupported), "spec.provider "+o.Provider)
	}
	if len(unsupported) > 0 {
		return fetchResult{}, fmt.Errorf("%s sets %s, which kustomize-deploy does not honour when it pulls an artifact", where, strings.Join(unsupported, ", "))
	}
	if or.URL == "" {
		return fetchResult{}, fmt.Errorf("%s has no spec.url", where)
	}
	auth, err := credential(ctx, f, f.ociSecrets, ocisource.AuthFromValues, "spec.secretRef", ref.Namespace, o.SecretName, where, FixOCISecret)
	if err != nil {
		return fetchResult{}, err
	}
	if auth == nil && o.ServiceAccountName != "" {
		if auth, err = f.accountAuth(ctx, ref.Namespace, o.ServiceAccountName, where); err != nil {
			return fetchResult{}, err
		}
	}
	// Every Secret is read before a cloud login mints anything: a missing
	// one fails the pull before anything reaches the network.
	verify, err := helmrepo.ReadVerification(ctx, f.lookup, ref.Namespace, o.Verify, f.sigstore)
	if err != nil {
		return fetchResult{}, fmt.Errorf("%s: %w", where, err)
	}
	if auth == nil && (o.Provider == "aws" || o.Provider == "gcp" || o.Provider == "azure") {
		if auth, err = f.providerLogin(ctx, o.Provider, or); err != nil {
			return fetchResult{}, fmt.Errorf("%s: spec.provider %s: %w", where, o.Provider, err)
		}
	}
	po := ocisource.Options{URL: or.URL, Ref: oref, Layer: ocisource.LayerSelector{MediaType: o.MediaType, Operation: o.Operation},
		Insecure: o.Insecure, Ignore: o.Ignore, Auth: auth, Transport: f.transport, Verify: verify}

	if err := f.mkScratch(); err != nil {
		return fetchResult{}, err
	}
	// Apart from fetched GitRepositories (scratch/NAMESPACE/NAME): a kind
	// is never a namespace.
	po.Dir = filepath.Join(f.scratch, config.OCIRepositoryKind, ref.Namespace, ref.Name)
	po.Timeout = f.limit()
	a, err := ocisource.Pull(ctx, po)
	if err != nil {
		var ae *ocisource.AuthError
		if errors.As(err, &ae) {
			give := "give the credentials of Secret " + o.SecretName
			if o.SecretName == "" {
				give = "name a Secret in spec.secretRef and give its credentials"
			}
			return fetchResult{}, &fixError{fix: FixOCISecret, err: fmt.Errorf("pulling %s: %w: %s: a Docker config.json or a Secret of type kubernetes.io/dockerconfigjson", where, err, give)}
		}
		return fetchResult{}, fmt.Errorf("pulling %s: %w", where, err)
	}
	res := fetchResult{src: Tree{Root: po.Dir, Revision: a.Revision, RevisionTime: a.Created}}
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

// providerLogin is the registry login of an OCIRepository with provider
// aws (an ECR token), gcp (a Google access token) or azure (an ACR
// refresh token), for that cloud's
// registry hosts only (as Flux sends them), refused by name for any
// other before a credential is minted; offline, from the environment's
// credentials only.
func (f *fetcher) providerLogin(ctx context.Context, provider string, or *config.Source) (*ocisource.Auth, error) {
	repo, err := ocisource.Repository(or.URL, false)
	if err != nil {
		return nil, err
	}
	host := repo.RegistryStr()
	offline := f.offline != nil && f.offline()
	var user, pass string
	switch provider {
	case "aws":
		if _, err := ecr.Region(host); err != nil {
			return nil, err
		}
		if f.aws == nil {
			return nil, fmt.Errorf("no AWS login configured")
		}
		user, pass, err = f.aws(ctx, host, ecr.Options{EnvironmentOnly: offline})
	case "gcp":
		if err := gar.CheckHost(host); err != nil {
			return nil, err
		}
		if f.gcp == nil {
			return nil, fmt.Errorf("no Google login configured")
		}
		user, pass, err = f.gcp(ctx, host, offline)
	case "azure":
		if err := acr.CheckHost(host); err != nil {
			return nil, err
		}
		if f.azure == nil {
			return nil, fmt.Errorf("no Azure login configured")
		}
		user, pass, err = f.azure(ctx, host, offline)
	}
	if err != nil {
		return nil, err
	}
	auth := ocisource.BasicAuth(host, user, pass)
	if f.mask != nil {
		f.mask(auth.Secrets())
	}
	return &auth, nil
}

// mkScratch makes the scratch directory, once.
func (f *fetcher) mkScratch() error {
	f.mu.Lock()
	defer f.mu.Unlock()
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

// accountAuth is the registry login of an OCIRepository's
// spec.serviceAccountName, as source-controller logs in with it: the
// Docker config Secrets the account's imagePullSecrets name, in the
// OCIRepository's namespace, read as every source's Secrets are (a name
// --oci-secret maps first), merged in their order. An account that does
// not exist fails the pull, as it fails source-controller's; one without
// pull secrets logs in with none.
func (f *fetcher) accountAuth(ctx context.Context, namespace, account, where string) (*ocisource.Auth, error) {
	if f.accounts == nil {
		return nil, fmt.Errorf("%s: spec.serviceAccountName %s: no cluster to read the account from", where, account)
	}
	names, found, err := f.accounts(ctx, namespace, account)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: spec.serviceAccountName: ServiceAccount %s/%s: %w", where, namespace, account, err)
	case !found:
		return nil, fmt.Errorf("%s: %w", where, &fetch.MissingError{Kind: "ServiceAccount", Namespace: namespace, Name: account,
			Msg: fmt.Sprintf("spec.serviceAccountName: ServiceAccount %s/%s is not in the cluster", namespace, account)})
	}
	var merged *ocisource.Auth
	for _, name := range names {
		field := fmt.Sprintf("spec.serviceAccountName: ServiceAccount %s/%s's imagePullSecrets", namespace, account)
		a, err := credential(ctx, f, f.ociSecrets, ocisource.AuthFromValues, field, namespace, name, where, FixOCISecret)
		if err != nil {
			return nil, err
		}
		if merged == nil {
			merged = a
		} else {
			m := merged.Merge(*a)
			merged = &m
		}
	}
	return merged, nil
}
