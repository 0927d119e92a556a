package decrypt

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/getsops/sops/v3/gcpkms"
	"github.com/getsops/sops/v3/keyservice"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gcp"
)

// decryptGCPKMS decrypts a data key with a Cloud KMS key through sops's
// own key source, authenticated with Google's application default
// credentials as gcp.TokenSource finds them: GOOGLE_APPLICATION_CREDENTIALS,
// as google-github-actions/auth sets it, or sops's GOOGLE_CREDENTIALS and
// GOOGLE_OAUTH_ACCESS_TOKEN; else gcloud's well-known file, else the
// metadata server of a GCE VM or GKE pod where it is known to be. It
// uses Cloud KMS's REST API, which sops offers beside gRPC: the same API
// over plain HTTPS, through the same client (and proxy settings) as every
// other key service here.
// SOPS_GCP_KMS_ENDPOINT, which sops reads, still overrides the endpoint.
func (s *keyService) decryptGCPKMS(k *keyservice.GcpKmsKey, ciphertext []byte) ([]byte, error) {
	creds, err := s.google.get(s.ctx)
	if err != nil {
		return nil, err
	}
	// The token first: Google's credential code flattens its errors into
	// text, which sops's error would bury.
	if _, err := creds.Token(); err != nil {
		if ctxErr := s.ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, tokenError(creds.Source, err)
	}
	mk := gcpkms.NewMasterKeyFromResourceID(k.GetResourceId())
	mk.EncryptedKey = string(ciphertext)
	gcpkms.NewTokenSource(creds).ApplyToMasterKey(mk)
	ctx := s.ctx
	if s.httpClient != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, s.httpClient)
	}
	gcpkms.ClientOptions{option.WithHTTPClient(oauth2.NewClient(ctx, creds))}.ApplyToMasterKey(mk)
	gcpkms.UseRESTClient{}.ApplyToMasterKey(mk)
	plain, err := mk.DecryptContext(s.ctx)
	if err != nil {
		if ctxErr := s.ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, googleError(creds.Source, err)
	}
	return plain, nil
}

// googleCredentials are the Google credentials of one Decryptor, found
// the first time a document needs them and then shared, so that tokens
// are reused across documents.
type googleCredentials struct {
	opts gcp.Options

	mu    sync.Mutex
	done  bool
	creds *gcp.Credentials
	err   error
}

// get finds the credentials; ctx bounds their later token refreshes.
func (g *googleCredentials) get(ctx context.Context) (*gcp.Credentials, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.done {
		g.creds, g.err = gcp.TokenSource(ctx, g.opts, gcp.CloudPlatformScope)
		switch {
		case errors.Is(g.err, gcp.ErrNoCredentials):
			g.err = fmt.Errorf("%w: %s", errNoGoogleCredentials, strings.TrimPrefix(g.err.Error(), "no Google credentials: "))
		case g.err != nil && isUnreachable(g.err):
			// The metadata server named or found does not answer.
			g.err = fmt.Errorf("%w: %w", ErrUnreachable, g.err)
		}
		g.done = true
	}
	return g.creds, g.err
}

// errNoGoogleCredentials is ErrNoCredentials, for Google.
var errNoGoogleCredentials = missingCredentials("Google credentials")

// tokenError says why no token could be had from source: its token
// endpoint could not be reached, or refused (with the OAuth error it gave:
// they name audiences and accounts, never the credentials).
func tokenError(source string, err error) error {
	if isUnreachable(err) {
		return fmt.Errorf("%w: getting a token for %s: %s", ErrUnreachable, source, cause(err))
	}
	return fmt.Errorf("%w: the token endpoint refused the credentials of %s (%s)", ErrAccessDenied, source, gcp.TokenError(err))
}

// googleError says why Google refused, by the HTTP status and Google's
// message (they name the key and the permission, never a token).
func googleError(source string, err error) error {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		if isUnreachable(err) {
			return fmt.Errorf("%w: %s", ErrUnreachable, cause(err))
		}
		return err
	}
	detail := fmt.Sprintf("Google %d: %s", ge.Code, ge.Message)
	switch {
	case ge.Code == http.StatusUnauthorized:
		return fmt.Errorf("%w: Cloud KMS did not accept the token of %s (%s)", ErrAccessDenied, source, detail)
	case ge.Code == http.StatusForbidden:
		return fmt.Errorf("%w: %s may not decrypt with the key, or it does not exist (%s)", ErrAccessDenied, source, detail)
	case ge.Code == http.StatusNotFound:
		return fmt.Errorf("%w (%s)", ErrKeyNotFound, detail)
	case ge.Code == http.StatusBadRequest && strings.Contains(ge.Message, "ciphertext"):
		return fmt.Errorf("%w: the encrypted data key was changed, or is for another key (%s)", ErrInvalidCiphertext, detail)
	}
	return errors.New(detail)
}
