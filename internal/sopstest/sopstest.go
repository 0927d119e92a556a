// Package sopstest encrypts test fixtures with sops and age through the
// sops library, as `sops --encrypt --age RECIPIENT` would, so tests need no
// sops binary and no checked-in opaque blobs.
package sopstest

import (
	"fmt"
	"time"

	"filippo.io/age"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/keyservice"

	"github.com/kustomize-deploy/kustomize-deploy/internal/sopsstore"
)

// K8sSecretRegex encrypts only data and stringData, as Flux recommends, so
// kustomize can still read and change the metadata.
const K8sSecretRegex = "^(data|stringData)$"

// Key is an age key pair.
type Key struct {
	Identity  string // AGE-SECRET-KEY-1...
	Recipient string // age1...
}

// NewKey generates an age key pair.
func NewKey() (Key, error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return Key{}, err
	}
	return Key{Identity: id.String(), Recipient: id.Recipient().String()}, nil
}

// Encrypt encrypts plain, in format f, for recipient. A non-empty regex
// limits encryption to matching keys (sops --encrypted-regex).
func Encrypt(recipient string, plain []byte, f formats.Format, regex string) ([]byte, error) {
	store := sopsstore.For(f)
	branches, err := store.LoadPlainFile(plain)
	if err != nil {
		return nil, fmt.Errorf("loading plain data: %w", err)
	}
	mk, err := sopsage.MasterKeyFromRecipient(recipient)
	if err != nil {
		return nil, err
	}
	tree := sops.Tree{
		Branches: branches,
		Metadata: sops.Metadata{KeyGroups: []sops.KeyGroup{{mk}}, EncryptedRegex: regex, Version: "3.13.3"},
	}
	// sops's stock local key service encrypts for a recipient without
	// needing any identity.
	dataKey, errs := tree.GenerateDataKeyWithKeyServices([]keyservice.KeyServiceClient{keyservice.NewLocalClient()})
	if len(errs) > 0 {
		return nil, fmt.Errorf("generating data key: %v", errs)
	}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	if err != nil {
		return nil, err
	}
	tree.Metadata.LastModified = time.Now().UTC()
	tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, err
	}
	return store.EmitEncryptedFile(tree)
}
