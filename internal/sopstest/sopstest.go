// Package sopstest encrypts test fixtures with sops through the sops
// library, as `sops --encrypt --age RECIPIENT` or `sops --encrypt --kms ARN`
// would, so tests need no sops binary and no checked-in opaque blobs. Every
// key type is encrypted for through sops's own key source: AWS KMS keys
// with the AWS environment of the test (see kmstest.Server.Setenv); PGP,
// Vault, GCP KMS and Azure Key Vault keys with what Services gives.
package sopstest

import (
	"fmt"
	"time"

	"filippo.io/age"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/azkv"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/gcpkms"
	"github.com/getsops/sops/v3/hcvault"
	"github.com/getsops/sops/v3/keyservice"
	sopskms "github.com/getsops/sops/v3/kms"
	"github.com/getsops/sops/v3/pgp"

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

// KMSKey is an AWS KMS key to encrypt for, as sops records it.
type KMSKey struct {
	// ARN of the key (or of an alias).
	ARN string
	// Role, if set, is assumed through STS before calling KMS.
	Role string
	// Context is the encryption context bound to the encrypted data key.
	Context map[string]string
}

// KeyGroup is one sops key group: each of its keys can decrypt the group's
// part of the data key.
type KeyGroup struct {
	Age []string // age recipients (age1...)
	KMS []KMSKey
	// PGP are fingerprints of keys in Services.PGP.
	PGP []string
	// Vault are transit key URIs (<address>/v1/<engine>/keys/<name>).
	Vault []string
	// GCPKMS are Cloud KMS key resource names.
	GCPKMS []string
	// AzureKV are Key Vault key URLs (<vault URL>/keys/<name>/<version>).
	AzureKV []string
}

// Encrypt encrypts plain, in format f, for recipient. A non-empty regex
// limits encryption to matching keys (sops --encrypted-regex).
func Encrypt(recipient string, plain []byte, f formats.Format, regex string) ([]byte, error) {
	return EncryptGroups([]KeyGroup{{Age: []string{recipient}}}, 0, plain, f, regex)
}

// EncryptKMS encrypts plain, in format f, for AWS KMS keys in one key
// group, as `sops --encrypt --kms ARN[+ROLE],... --encryption-context ...`
// would. It calls KMS (and STS for roles) with the AWS SDK's default
// configuration: the environment must point at a test server.
func EncryptKMS(keys []KMSKey, plain []byte, f formats.Format, regex string) ([]byte, error) {
	return EncryptGroups([]KeyGroup{{KMS: keys}}, 0, plain, f, regex)
}

// EncryptGroups encrypts plain, in format f, for several key groups. With
// more than one group the data key is split with Shamir's scheme and
// threshold groups are needed to decrypt (0: all of them), as with sops
// key_groups and shamir_threshold.
func EncryptGroups(groups []KeyGroup, threshold int, plain []byte, f formats.Format, regex string) ([]byte, error) {
	return EncryptGroupsWith(Services{}, groups, threshold, plain, f, regex)
}

// EncryptGroupsWith is EncryptGroups for key groups with PGP, Vault, GCP
// KMS or Azure Key Vault keys, which svc says how to reach.
func EncryptGroupsWith(svc Services, groups []KeyGroup, threshold int, plain []byte, f formats.Format, regex string) ([]byte, error) {
	store := sopsstore.For(f)
	branches, err := store.LoadPlainFile(plain)
	if err != nil {
		return nil, fmt.Errorf("loading plain data: %w", err)
	}
	var keyGroups []sops.KeyGroup
	for _, g := range groups {
		var kg sops.KeyGroup
		for _, r := range g.Age {
			mk, err := sopsage.MasterKeyFromRecipient(r)
			if err != nil {
				return nil, err
			}
			kg = append(kg, mk)
		}
		for _, k := range g.KMS {
			var encCtx map[string]*string
			for name, value := range k.Context {
				if encCtx == nil {
					encCtx = map[string]*string{}
				}
				encCtx[name] = &value
			}
			kg = append(kg, sopskms.NewMasterKey(k.ARN, k.Role, encCtx))
		}
		for _, fp := range g.PGP {
			kg = append(kg, pgp.NewMasterKeyFromFingerprint(fp))
		}
		for _, uri := range g.Vault {
			mk, err := hcvault.NewMasterKeyFromURI(uri)
			if err != nil {
				return nil, err
			}
			kg = append(kg, mk)
		}
		for _, id := range g.GCPKMS {
			kg = append(kg, gcpkms.NewMasterKeyFromResourceID(id))
		}
		for _, u := range g.AzureKV {
			mk, err := azkv.NewMasterKeyFromURL(u)
			if err != nil {
				return nil, err
			}
			kg = append(kg, mk)
		}
		keyGroups = append(keyGroups, kg)
	}
	tree := sops.Tree{
		Branches: branches,
		Metadata: sops.Metadata{KeyGroups: keyGroups, ShamirThreshold: threshold, EncryptedRegex: regex, Version: "3.13.3"},
	}
	// sops's stock local key service encrypts for an age recipient without
	// any identity, and for a KMS key with the AWS SDK's default config;
	// encrypter gives the other key sources what they need.
	enc, cleanup, err := newEncrypter(svc)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	dataKey, errs := tree.GenerateDataKeyWithKeyServices([]keyservice.KeyServiceClient{keyservice.NewCustomLocalClient(enc)})
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
