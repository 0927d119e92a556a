package ocisource

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/tuf"
)

// TrustedRoot gives the Sigstore trusted root (Fulcio's CAs, Rekor's and
// the CT logs' keys, the timestamp authorities) keyless signatures are
// verified against.
type TrustedRoot func(ctx context.Context) (root.TrustedMaterial, error)

// Sigstore is the trust keyless signatures are verified against: its
// trusted root, and how many signed certificate timestamps (of the
// root's CT logs) a Fulcio certificate must embed.
type Sigstore struct {
	Root TrustedRoot
	SCTs int
}

// DefaultSigstore is Sigstore's public-good instance, checked as cosign
// checks it: Fulcio's certificates embed an SCT, and it is required.
func DefaultSigstore() Sigstore { return Sigstore{Root: PublicGood, SCTs: 1} }

// PublicGood is Sigstore's public-good trusted root, as cosign reads it:
// through TUF from tuf.DefaultMirror, starting from the root sigstore-go
// embeds, its metadata cached in the user's cache directory
// (kustomize-deploy/sigstore-tuf). It is read once per process; an error
// names the TUF repository that could not be reached.
func PublicGood(context.Context) (root.TrustedMaterial, error) {
	tm, err := publicGood()
	if err != nil {
		return nil, err
	}
	return tm, nil
}

var publicGood = sync.OnceValues(func() (*root.TrustedRoot, error) {
	cache := ""
	if dir, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(dir, "kustomize-deploy", "sigstore-tuf")
	}
	return trustedRootFromTUF(tuf.DefaultMirror, cache)
})

// trustedRootFromTUF reads the trusted root of the TUF repository at
// mirror, starting from the public-good root sigstore-go embeds, caching
// its metadata in cacheDir (none when empty).
func trustedRootFromTUF(mirror, cacheDir string) (*root.TrustedRoot, error) {
	opts := tuf.DefaultOptions().WithRepositoryBaseURL(mirror)
	if cacheDir != "" {
		opts = opts.WithCachePath(cacheDir)
	} else {
		opts = opts.WithDisableLocalCache()
	}
	tr, err := root.FetchTrustedRootWithOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("keyless verification needs Sigstore's public-good trusted root, read through TUF from %s: %w", mirror, err)
	}
	return tr, nil
}
