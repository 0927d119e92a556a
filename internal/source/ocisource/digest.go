package ocisource

import (
	"context"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
)

// Digest is the digest of the manifest ref (an image or artifact
// reference, e.g. registry.example/web:1.4) names now, asked of its
// registry with a HEAD request, with the credentials keychain gives for
// the registry's host (nil: anonymous). Loopback registries are spoken
// to in plain HTTP, as go-containerregistry does. An *AuthError is the
// registry refusing the credentials; errors carry none of secrets (the
// keychain's values) nor what the registry said beyond its status and
// error codes.
func Digest(ctx context.Context, ref string, keychain authn.Keychain, secrets []string, transport http.RoundTripper) (string, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	if transport == nil {
		transport = remote.DefaultTransport
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(fetch.Transport(transport))}
	if keychain != nil {
		opts = append(opts, remote.WithAuthFromKeychain(keychain))
	}
	desc, err := remote.Head(parsed, opts...)
	if err != nil {
		how := "no credentials for its registry were given"
		if len(secrets) > 0 {
			how = "the credentials given for its registry were refused"
		}
		return "", explain(err, secrets, how)
	}
	return desc.Digest.String(), nil
}
