package decrypt

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/getsops/sops/v3/hcvault"
	"github.com/getsops/sops/v3/keyservice"
	vaultapi "github.com/hashicorp/vault/api"
)

// decryptVault decrypts a data key with a HashiCorp Vault transit key
// through sops's own key source and Vault's API client: a transit decrypt
// of the key's engine and name, with Options.VaultToken, at the key's
// address or, when set, Options.VaultAddress. The token is never read
// from ~/.vault-token, as sops would without one. Vault's client reads its
// own environment for the rest (VAULT_NAMESPACE, VAULT_CACERT, ...).
func (s *keyService) decryptVault(k *keyservice.VaultKey, ciphertext []byte) ([]byte, error) {
	if s.vaultToken == "" {
		return nil, fmt.Errorf("%w (set VAULT_TOKEN)", errNoVaultToken)
	}
	address := k.GetVaultAddress()
	if s.vaultAddress != "" {
		address = s.vaultAddress
	}
	mk := hcvault.NewMasterKey(address, k.GetEnginePath(), k.GetKeyName())
	mk.EncryptedKey = string(ciphertext)
	hcvault.Token(s.vaultToken).ApplyToMasterKey(mk)
	if s.httpClient != nil {
		hcvault.NewHTTPClient(s.httpClient).ApplyToMasterKey(mk)
	}
	plain, err := mk.DecryptContext(s.ctx)
	if err != nil {
		if ctxErr := s.ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, vaultError(address, err)
	}
	return plain, nil
}

// errNoVaultToken is ErrNoCredentials, for Vault.
var errNoVaultToken = missingCredentials("Vault token")

// vaultError says why Vault refused, by its status and messages (they
// name paths and policies, never the token: the API client does not
// quote requests).
func vaultError(address string, err error) error {
	var re *vaultapi.ResponseError
	if !errors.As(err, &re) {
		if isUnreachable(err) {
			return fmt.Errorf("%w: %s: %s", ErrUnreachable, address, cause(err))
		}
		return err
	}
	detail := fmt.Sprintf("Vault %d: %s", re.StatusCode, strings.Join(re.Errors, "; "))
	msg := strings.Join(re.Errors, " ")
	switch {
	case re.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: the token is unknown or expired, or its policy does not allow transit decrypt with the key (%s)", ErrAccessDenied, detail)
	case re.StatusCode == http.StatusNotFound || strings.Contains(msg, "key not found"):
		return fmt.Errorf("%w (%s)", ErrKeyNotFound, detail)
	case strings.Contains(msg, "message authentication failed") || strings.Contains(msg, "invalid ciphertext"):
		return fmt.Errorf("%w: the encrypted data key was changed, or is for another key (%s)", ErrInvalidCiphertext, detail)
	}
	return errors.New(detail)
}
