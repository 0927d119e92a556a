package decrypt

import (
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"
	"github.com/getsops/sops/v3/azkv"
	"github.com/getsops/sops/v3/keyservice"

	"github.com/kustomize-deploy/kustomize-deploy/internal/azure"
)

// decryptAzureKV decrypts a data key with an Azure Key Vault key through
// sops's own azkv key source, with the Entra ID credential
// azure.NewCredential picks (workload identity federation, a client
// secret or GitHub OIDC from the environment; a managed identity where
// the platform names its endpoint or when asked for; the az CLI's
// session when one is signed in) instead of sops's default chain, which
// would probe IMDS and run the az CLI whatever the machine.
func (s *keyService) decryptAzureKV(k *keyservice.AzureKeyVaultKey, ciphertext []byte) ([]byte, error) {
	cred, err := s.azure.get()
	if err != nil {
		return nil, err
	}
	mk := azkv.NewMasterKey(k.GetVaultUrl(), k.GetName(), k.GetVersion())
	mk.EncryptedKey = string(ciphertext)
	azkv.NewTokenCredential(cred).ApplyToMasterKey(mk)
	if s.httpClient != nil {
		azkv.NewClientOptions(&azkeys.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: s.httpClient}}).ApplyToMasterKey(mk)
	}
	plain, err := mk.DecryptContext(s.ctx)
	if err != nil {
		if ctxErr := s.ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, azureError(k.GetVaultUrl(), cred.Source, err)
	}
	return plain, nil
}

// azureCredential is the Entra ID credential of one Decryptor, made the
// first time a document needs it and then shared: the SDK caches its
// tokens.
type azureCredential struct {
	opts azure.Options

	mu   sync.Mutex
	done bool
	cred *azure.Credential
	err  error
}

func (a *azureCredential) get() (*azure.Credential, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done {
		a.cred, a.err = azure.NewCredential(a.opts)
		if errors.Is(a.err, azure.ErrNoCredentials) {
			a.err = fmt.Errorf("%w: %s", errNoAzureCredentials, a.err.Error()[len("no Azure credentials: "):])
		}
		a.done = true
	}
	return a.cred, a.err
}

// errNoAzureCredentials is ErrNoCredentials, for Azure.
var errNoAzureCredentials = missingCredentials("Azure credentials")

// azureError says why no data key came back: Entra ID gave no token for
// the credential (source), Key Vault refused (its status, code and
// message: they name the application, the vault and the permission), or
// could not be reached.
func azureError(vault, source string, err error) error {
	var afe *azidentity.AuthenticationFailedError
	switch {
	case azure.Refused(err):
		return fmt.Errorf("%w: Entra ID refused the %s (%s)", ErrAccessDenied, source, azure.TokenError(err))
	case errors.As(err, &afe) && isUnreachable(err):
		return fmt.Errorf("%w: getting a token for the %s: %s", ErrUnreachable, source, cause(err))
	case errors.As(err, &afe):
		return fmt.Errorf("%w: the %s got no token: %s", errNoAzureCredentials, source, azure.TokenError(err))
	}
	status, detail, ok := azure.ResponseError(err)
	switch {
	case !ok && isUnreachable(err):
		return fmt.Errorf("%w: %s: %s", ErrUnreachable, vault, cause(err))
	case !ok:
		return fmt.Errorf("%s: %s", source, azure.TokenError(err))
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%w: the %s may not decrypt with the key (Key Vault %s)", ErrAccessDenied, source, detail)
	case status == http.StatusNotFound:
		return fmt.Errorf("%w (Key Vault %s)", ErrKeyNotFound, detail)
	case status == http.StatusBadRequest:
		return fmt.Errorf("%w: the encrypted data key was changed, or is for another key (Key Vault %s)", ErrInvalidCiphertext, detail)
	}
	return fmt.Errorf("Key Vault %s", detail)
}
