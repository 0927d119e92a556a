// Package decrypt decrypts SOPS-encrypted files and manifests the way
// Flux's kustomize-controller does, through the sops library (never the
// CLI), with the age identities and PGP private keys it is given and, if
// enabled, AWS KMS keys reached with the AWS SDK's standard credential
// chain. It never reads age or PGP keys from the environment or a
// keyring, and never runs gpg.
//
// Two steps use it: DecryptFiles decrypts, in a scratch copy of the
// repository, the files secretGenerators read before kustomize builds;
// DecryptObjects decrypts the manifests the build emits.
package decrypt

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/ProtonMail/go-crypto/openpgp"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/logging"
	"github.com/sirupsen/logrus"

	"github.com/kustomize-deploy/kustomize-deploy/internal/azure"
	"github.com/kustomize-deploy/kustomize-deploy/internal/gcp"
)

// quietSops keeps sops's loggers off stderr: its tree walk logs comments it
// cannot decrypt verbatim, and they may hold secrets; its key sources (the
// AWSKMS logger among them, registered when this package imports sops/kms)
// log every attempt. Our errors carry what the user needs.
var quietSops sync.Once

// DefaultMaxFileSize is the largest encrypted file DecryptFiles reads when
// Options.MaxFileSize is zero.
const DefaultMaxFileSize int64 = 5 << 20

// Options configures a Decryptor.
type Options struct {
	// Keys are the private keys, already read by the caller: each element
	// an age identity ("AGE-SECRET-KEY-1…", see ParseAgeKeys) or an
	// armored OpenPGP private key block (see ParsePGPKeys; ParseKeys reads
	// both). They are the only keys used: SOPS_AGE_KEY*, ~/.ssh,
	// ~/.config/sops and GnuPG keyrings are ignored.
	Keys []string
	// AWSKMS lets data keys encrypted for AWS KMS keys (sops "kms"
	// entries, with their role and encryption context) be decrypted
	// through sops's own KMS key source: the key's role is assumed with
	// STS and its encryption context passed to KMS; the region is the
	// key's. Credentials and endpoints come from the AWS SDK's standard
	// configuration, read by the SDK (this package reads no environment):
	// AWS_ACCESS_KEY_ID and friends, AWS_PROFILE and the shared files (and
	// a key's aws_profile), AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE
	// (GitHub OIDC), container and instance credentials;
	// AWS_ENDPOINT_URL_KMS, AWS_ENDPOINT_URL_STS and AWS_ENDPOINT_URL.
	// When false, KMS keys are not tried and errors list them as such.
	AWSKMS bool
	// VaultToken authenticates to HashiCorp Vault, for data keys
	// encrypted with a transit key (sops "hc_vault" entries); read by the
	// front end from VAULT_TOKEN. VaultAddress, when set (VAULT_ADDR),
	// replaces the address each key records: the token is then only ever
	// sent there, whatever a file names. Vault's API client reads the
	// rest of its configuration itself (VAULT_NAMESPACE, VAULT_CACERT,
	// ...); sops's SOPS_HC_VAULT_ALLOWLIST applies.
	VaultToken, VaultAddress string
	// Getenv reads the credentials of GCP KMS and Azure Key Vault keys
	// (sops "gcp_kms" and "azure_kv" entries) when a document needs them:
	// for Google GOOGLE_APPLICATION_CREDENTIALS (as
	// google-github-actions/auth sets it: Workload Identity Federation or
	// a service account key), or sops's GOOGLE_CREDENTIALS and
	// GOOGLE_OAUTH_ACCESS_TOKEN, else gcloud's application default
	// credentials file or the metadata server of a GCE VM or GKE pod (see
	// gcp.TokenSource); for Azure
	// AZURE_TENANT_ID and AZURE_CLIENT_ID with AZURE_FEDERATED_TOKEN_FILE
	// (workload identity), AZURE_CLIENT_SECRET or the job's GitHub OIDC
	// token (ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN), else a managed
	// identity or the az CLI's session (see azure.NewCredential). Nil
	// reads nothing: such keys then fail for
	// want of credentials.
	Getenv func(string) string
	// HTTPClient reaches Vault and the clouds' key services; nil means
	// each client's default. Tests pass one that reaches their doubles.
	HTTPClient *http.Client
	// MaxFileSize caps the size of a file DecryptFiles decrypts.
	// Default DefaultMaxFileSize.
	MaxFileSize int64
	// Reveal, when set, is handed every value decrypted, in any kind of
	// document (a ConfigMap's as much as a Secret's), before it is
	// used: for masking.
	Reveal func(plaintexts []string)
}

// secretVariables hold credentials themselves (rather than a file's
// path): a front end masks their values.
var secretVariables = []string{"GOOGLE_OAUTH_ACCESS_TOKEN", "GOOGLE_CREDENTIALS", "AZURE_CLIENT_SECRET", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"}

// Secrets are the values of o a front end masks: the private keys, the
// Vault token, and the credentials the environment holds as values.
func (o Options) Secrets() []string {
	out := slices.Clone(o.Keys)
	if o.VaultToken != "" {
		out = append(out, o.VaultToken)
	}
	if o.Getenv != nil {
		for _, name := range secretVariables {
			if v := strings.TrimSpace(o.Getenv(name)); v != "" && (name != "GOOGLE_CREDENTIALS" || strings.HasPrefix(v, "{")) {
				out = append(out, v)
			}
		}
	}
	return out
}

// Decryptor decrypts SOPS data with a fixed set of keys and, optionally,
// AWS KMS. It holds no per-call state and is safe for concurrent use.
type Decryptor struct {
	identities  sopsage.ParsedIdentities
	pgp         openpgp.EntityList
	awsKMS      bool
	vaultToken  string
	vaultAddr   string
	httpClient  *http.Client
	google      *googleCredentials
	azure       *azureCredential
	maxFileSize int64
	reveal      func([]string)
}

// New parses the keys and returns a Decryptor that uses only them, and
// AWS KMS if opts.AWSKMS is set. When no key can decrypt a document, the
// error names every key the document lists and why it failed.
func New(opts Options) (*Decryptor, error) {
	ids := make(sopsage.ParsedIdentities, 0, len(opts.Keys))
	var ring openpgp.EntityList
	for i, s := range opts.Keys {
		if isPGPKey(s) {
			keys, err := parsePGPKey(s)
			if err != nil {
				return nil, fmt.Errorf("key %d: %w", i+1, err)
			}
			ring = append(ring, keys...)
			continue
		}
		id, err := parseIdentity(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("age identity %d: %w", i+1, err)
		}
		ids = append(ids, id)
	}
	limit := opts.MaxFileSize
	if limit <= 0 {
		limit = DefaultMaxFileSize
	}
	quietSops.Do(func() { logging.SetLevel(logrus.ErrorLevel) })
	return &Decryptor{
		identities: ids, pgp: ring, awsKMS: opts.AWSKMS,
		vaultToken: strings.TrimSpace(opts.VaultToken), vaultAddr: strings.TrimRight(opts.VaultAddress, "/"), httpClient: opts.HTTPClient,
		google:      &googleCredentials{opts: gcp.Options{Getenv: opts.Getenv, HTTPClient: opts.HTTPClient}},
		azure:       &azureCredential{opts: azure.Options{Getenv: opts.Getenv, HTTPClient: opts.HTTPClient}},
		maxFileSize: limit, reveal: opts.Reveal,
	}, nil
}
