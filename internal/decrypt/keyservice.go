package decrypt

import (
	"context"
	"errors"
	"fmt"

	"filippo.io/age"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keyservice"
)

// ageKeyService is a sops key service limited to the age identities it was
// given. sops's own keyservice.Server builds an age.MasterKey without
// identities, which makes the key load them from SOPS_AGE_KEY,
// SOPS_AGE_KEY_FILE, SOPS_AGE_KEY_CMD, ~/.ssh and ~/.config/sops/age/keys.txt;
// this server injects ours with ParsedIdentities.ApplyToMasterKey instead and
// never lets an empty set through, so the environment is never consulted.
// Like Flux's internal keyservice it is wrapped in a local (in-process)
// client. It serves no other key type.
//
// One is made per document so it can remember why data keys failed to
// decrypt: sops folds those errors into a string.
type ageKeyService struct {
	identities sopsage.ParsedIdentities
	// otherErr is the first failure that was not "no identity matched",
	// e.g. a corrupted encrypted data key.
	otherErr error
}

var _ keyservice.KeyServiceServer = (*ageKeyService)(nil)

func (d *Decryptor) newKeyService() *ageKeyService {
	return &ageKeyService{identities: d.identities}
}

func (s *ageKeyService) clients() []keyservice.KeyServiceClient {
	return []keyservice.KeyServiceClient{keyservice.NewCustomLocalClient(s)}
}

// Decrypt decrypts a data key encrypted for an age recipient.
func (s *ageKeyService) Decrypt(_ context.Context, req *keyservice.DecryptRequest) (*keyservice.DecryptResponse, error) {
	k, ok := req.GetKey().GetKeyType().(*keyservice.Key_AgeKey)
	if !ok {
		return nil, fmt.Errorf("key type %T is not supported: only age identities are configured", req.GetKey().GetKeyType())
	}
	// An empty set would make MasterKey.Decrypt fall back to the environment.
	if len(s.identities) == 0 {
		return nil, errors.New("no age identities configured")
	}
	mk := sopsage.MasterKey{Recipient: k.AgeKey.GetRecipient(), EncryptedKey: string(req.GetCiphertext())}
	s.identities.ApplyToMasterKey(&mk)
	plain, err := mk.Decrypt()
	if err != nil {
		var noMatch *age.NoIdentityMatchError
		if !errors.As(err, &noMatch) && s.otherErr == nil {
			s.otherErr = fmt.Errorf("recipient %s: %w", k.AgeKey.GetRecipient(), err)
		}
		return nil, err
	}
	return &keyservice.DecryptResponse{Plaintext: plain}, nil
}

// Encrypt is not offered: this tool only decrypts.
func (s *ageKeyService) Encrypt(context.Context, *keyservice.EncryptRequest) (*keyservice.EncryptResponse, error) {
	return nil, errors.New("encryption is not supported by the decryption key service")
}
