package sopstest

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"
	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/getsops/sops/v3/azkv"
	"github.com/getsops/sops/v3/gcpkms"
	"github.com/getsops/sops/v3/hcvault"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/pgp"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"
)

// PGPKey is an OpenPGP key pair without passphrase.
type PGPKey struct {
	// Fingerprint is the primary key's, as sops records it.
	Fingerprint string
	// Private is the armored private key block, as
	// `gpg --export-secret-keys --armor` writes it.
	Private string
	// Public is the armored public key block.
	Public string

	entity *openpgp.Entity
}

// NewPGPKey generates a PGP key pair (sops's OpenPGP library's default
// algorithm).
func NewPGPKey(name string) (PGPKey, error) {
	e, err := openpgp.NewEntity(name, "kustomize-deploy test", name+"@example.test", nil)
	if err != nil {
		return PGPKey{}, err
	}
	var priv, pub bytes.Buffer
	w, err := armor.Encode(&priv, openpgp.PrivateKeyType, nil)
	if err != nil {
		return PGPKey{}, err
	}
	if err := e.SerializePrivate(w, nil); err != nil {
		return PGPKey{}, err
	}
	w.Close()
	w, err = armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err != nil {
		return PGPKey{}, err
	}
	if err := e.Serialize(w); err != nil {
		return PGPKey{}, err
	}
	w.Close()
	return PGPKey{
		Fingerprint: strings.ToUpper(hex.EncodeToString(e.PrimaryKey.Fingerprint)),
		Private:     priv.String() + "\n",
		Public:      pub.String() + "\n",
		entity:      e,
	}, nil
}

// Services say how encryption reaches the key types that need more than
// a recipient, as the admin who encrypts a repository's files would.
type Services struct {
	// PGP are the keys whose fingerprints key groups name (their public
	// halves are used).
	PGP []PGPKey
	// VaultToken authenticates to Vault.
	VaultToken string
	// GoogleToken is an access token for Cloud KMS.
	GoogleToken string
	// AzureToken is an access token for Key Vault.
	AzureToken string
	// HTTPClient reaches Vault, Cloud KMS and Key Vault (kmstest.Client).
	HTTPClient *http.Client
}

// encrypter is a key service that encrypts with sops's own key sources,
// given what Services holds; age and AWS KMS keys go to sops's stock one.
type encrypter struct {
	keyservice.Server
	svc     Services
	pubring string
}

func newEncrypter(svc Services) (*encrypter, func(), error) {
	enc := &encrypter{svc: svc}
	if len(svc.PGP) == 0 {
		return enc, func() {}, nil
	}
	// sops's PGP key source reads public keys from a keyring file.
	dir, err := os.MkdirTemp("", "sopstest-pubring-")
	if err != nil {
		return nil, nil, err
	}
	var ring bytes.Buffer
	for _, k := range svc.PGP {
		if err := k.entity.Serialize(&ring); err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
	}
	enc.pubring = filepath.Join(dir, "pubring.gpg")
	if err := os.WriteFile(enc.pubring, ring.Bytes(), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return enc, func() { os.RemoveAll(dir) }, nil
}

func (e *encrypter) Encrypt(ctx context.Context, req *keyservice.EncryptRequest) (*keyservice.EncryptResponse, error) {
	var (
		out []byte
		err error
	)
	switch k := req.GetKey().GetKeyType().(type) {
	case *keyservice.Key_PgpKey:
		mk := pgp.NewMasterKeyFromFingerprint(k.PgpKey.GetFingerprint())
		pgp.PubRing(e.pubring).ApplyToMasterKey(mk)
		err = mk.EncryptContext(ctx, req.GetPlaintext())
		out = mk.EncryptedDataKey()
	case *keyservice.Key_VaultKey:
		mk := hcvault.NewMasterKey(k.VaultKey.GetVaultAddress(), k.VaultKey.GetEnginePath(), k.VaultKey.GetKeyName())
		hcvault.Token(e.svc.VaultToken).ApplyToMasterKey(mk)
		hcvault.NewHTTPClient(e.svc.HTTPClient).ApplyToMasterKey(mk)
		err = mk.EncryptContext(ctx, req.GetPlaintext())
		out = mk.EncryptedDataKey()
	case *keyservice.Key_GcpKmsKey:
		mk := gcpkms.NewMasterKeyFromResourceID(k.GcpKmsKey.GetResourceId())
		ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.svc.GoogleToken})
		gcpkms.NewTokenSource(ts).ApplyToMasterKey(mk)
		client := oauth2.NewClient(context.WithValue(ctx, oauth2.HTTPClient, e.svc.HTTPClient), ts)
		gcpkms.ClientOptions{option.WithHTTPClient(client)}.ApplyToMasterKey(mk)
		gcpkms.UseRESTClient{}.ApplyToMasterKey(mk)
		err = mk.EncryptContext(ctx, req.GetPlaintext())
		out = mk.EncryptedDataKey()
	case *keyservice.Key_AzureKeyvaultKey:
		mk := azkv.NewMasterKey(k.AzureKeyvaultKey.GetVaultUrl(), k.AzureKeyvaultKey.GetName(), k.AzureKeyvaultKey.GetVersion())
		azkv.NewTokenCredential(staticToken(e.svc.AzureToken)).ApplyToMasterKey(mk)
		azkv.NewClientOptions(&azkeys.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: e.svc.HTTPClient}}).ApplyToMasterKey(mk)
		err = mk.EncryptContext(ctx, req.GetPlaintext())
		out = mk.EncryptedDataKey()
	default:
		return e.Server.Encrypt(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	return &keyservice.EncryptResponse{Ciphertext: out}, nil
}

// staticToken is an Azure credential that always has the same token.
type staticToken string

func (t staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	if t == "" {
		return azcore.AccessToken{}, errors.New("sopstest: no Azure token")
	}
	return azcore.AccessToken{Token: string(t), ExpiresOn: time.Now().Add(time.Hour)}, nil
}
