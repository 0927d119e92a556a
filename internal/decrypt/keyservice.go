package decrypt

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"filippo.io/age"
	"github.com/ProtonMail/go-crypto/openpgp"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keyservice"
)

// keyService is a sops key service limited to the keys it was given: our
// age identities and PGP keys and, when enabled, AWS KMS.
//
// sops's own keyservice.Server builds an age.MasterKey without identities,
// which makes the key load them from SOPS_AGE_KEY, SOPS_AGE_KEY_FILE,
// SOPS_AGE_KEY_CMD, ~/.ssh and ~/.config/sops/age/keys.txt; this server
// injects ours with ParsedIdentities.ApplyToMasterKey instead and never
// lets an empty set through, so the environment is never consulted for age.
// PGP keys are decrypted in memory (see decryptPGP).
// Vault transit keys go through sops's hcvault.MasterKey with our token,
// GCP KMS and Azure Key Vault keys through gcpkms.MasterKey and
// azkv.MasterKey with credentials from Getenv.
// KMS keys go through sops's kms.MasterKey, which uses the AWS SDK's
// standard configuration (see Options.AWSKMS). Other key types are refused.
// Like Flux's internal keyservice it is wrapped in a local (in-process)
// client.
//
// sops tries the keys of each key group in turn (age first, then the
// others in file order) and calls Decrypt for each until one succeeds, so
// a document with several groups or mixed age and KMS keys decrypts with
// whatever key is available.
//
// One is made per document, for two reasons: it carries the caller's
// context into KMS calls (sops passes context.Background()), and it
// remembers why each key failed, since sops folds those errors into a
// string.
type keyService struct {
	ctx        context.Context
	identities sopsage.ParsedIdentities
	pgp        openpgp.EntityList
	awsKMS     bool
	// vaultToken, vaultAddress, httpClient: see Options.
	vaultToken, vaultAddress string
	httpClient               *http.Client
	google                   *googleCredentials
	azure                    *azureCredential
	// failures are the keys that could not decrypt, in the order tried.
	failures []*KeyError
}

var _ keyservice.KeyServiceServer = (*keyService)(nil)

func (d *Decryptor) newKeyService(ctx context.Context) *keyService {
	return &keyService{
		ctx: ctx, identities: d.identities, pgp: d.pgp, awsKMS: d.awsKMS,
		vaultToken: d.vaultToken, vaultAddress: d.vaultAddr, httpClient: d.httpClient, google: d.google, azure: d.azure,
	}
}

func (s *keyService) clients() []keyservice.KeyServiceClient {
	return []keyservice.KeyServiceClient{keyservice.NewCustomLocalClient(s)}
}

// Decrypt decrypts a data key (or a Shamir share of it) with one master
// key, and records why it failed if it did.
func (s *keyService) Decrypt(_ context.Context, req *keyservice.DecryptRequest) (*keyservice.DecryptResponse, error) {
	var (
		plain []byte
		err   error
	)
	ke := describeKey(req.GetKey())
	switch k := req.GetKey().GetKeyType().(type) {
	case *keyservice.Key_AgeKey:
		plain, err = s.decryptAge(k.AgeKey, req.GetCiphertext())
	case *keyservice.Key_KmsKey:
		plain, err = s.decryptKMS(k.KmsKey, req.GetCiphertext())
	case *keyservice.Key_PgpKey:
		plain, err = s.decryptPGP(req.GetCiphertext())
	case *keyservice.Key_VaultKey:
		plain, err = s.decryptVault(k.VaultKey, req.GetCiphertext())
	case *keyservice.Key_GcpKmsKey:
		plain, err = s.decryptGCPKMS(k.GcpKmsKey, req.GetCiphertext())
	case *keyservice.Key_AzureKeyvaultKey:
		plain, err = s.decryptAzureKV(k.AzureKeyvaultKey, req.GetCiphertext())
	default:
		err = ErrUnsupportedKey
	}
	if err != nil {
		ke.Err = err
		s.failures = append(s.failures, ke)
		return nil, err
	}
	return &keyservice.DecryptResponse{Plaintext: plain}, nil
}

// Encrypt is not offered: this tool only decrypts.
func (s *keyService) Encrypt(context.Context, *keyservice.EncryptRequest) (*keyservice.EncryptResponse, error) {
	return nil, errors.New("encryption is not supported by the decryption key service")
}

// errNoAgeIdentities is the age failure when none are configured.
var errNoAgeIdentities = fmt.Errorf("%w (no age identities configured)", ErrNoMatchingIdentity)

func (s *keyService) decryptAge(k *keyservice.AgeKey, ciphertext []byte) ([]byte, error) {
	// An empty set would make MasterKey.Decrypt fall back to the environment.
	if len(s.identities) == 0 {
		return nil, errNoAgeIdentities
	}
	mk := sopsage.MasterKey{Recipient: k.GetRecipient(), EncryptedKey: string(ciphertext)}
	s.identities.ApplyToMasterKey(&mk)
	plain, err := mk.Decrypt()
	if err != nil {
		var noMatch *age.NoIdentityMatchError
		if errors.As(err, &noMatch) {
			return nil, ErrNoMatchingIdentity
		}
		// e.g. a corrupted encrypted data key; age's errors quote no key.
		return nil, err
	}
	return plain, nil
}

// describeKey names a key by its type and public identifier, for errors.
func describeKey(k *keyservice.Key) *KeyError {
	switch k := k.GetKeyType().(type) {
	case *keyservice.Key_AgeKey:
		return &KeyError{Type: "age", Key: k.AgeKey.GetRecipient()}
	case *keyservice.Key_KmsKey:
		return &KeyError{Type: "kms", Key: k.KmsKey.GetArn(), Role: k.KmsKey.GetRole()}
	case *keyservice.Key_PgpKey:
		return &KeyError{Type: "pgp", Key: k.PgpKey.GetFingerprint()}
	case *keyservice.Key_GcpKmsKey:
		return &KeyError{Type: "gcp_kms", Key: k.GcpKmsKey.GetResourceId()}
	case *keyservice.Key_AzureKeyvaultKey:
		return &KeyError{Type: "azure_kv", Key: k.AzureKeyvaultKey.GetVaultUrl() + "/keys/" + k.AzureKeyvaultKey.GetName() + "/" + k.AzureKeyvaultKey.GetVersion()}
	case *keyservice.Key_VaultKey:
		return &KeyError{Type: "hc_vault", Key: k.VaultKey.GetVaultAddress() + "/v1/" + k.VaultKey.GetEnginePath() + "/keys/" + k.VaultKey.GetKeyName()}
	case *keyservice.Key_HckmsKey:
		return &KeyError{Type: "hckms", Key: k.HckmsKey.GetKeyId()}
	default:
		return &KeyError{Type: "unknown", Key: fmt.Sprintf("%T", k)}
	}
}
