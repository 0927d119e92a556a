// Package decrypt decrypts SOPS-encrypted files and manifests the way
// Flux's kustomize-controller does, through the sops library (never the
// CLI), with the age identities it is given and, if enabled, AWS KMS keys
// reached with the AWS SDK's standard credential chain. It never reads age
// keys from the environment.
//
// Two steps use it: DecryptFiles decrypts, in a scratch copy of the
// repository, the files secretGenerators read before kustomize builds;
// DecryptObjects decrypts the manifests the build emits.
package decrypt

import (
	"fmt"
	"strings"
	"sync"

	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/logging"
	"github.com/sirupsen/logrus"
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
	// AgeIdentities are the age secret keys ("AGE-SECRET-KEY-1…"), one per
	// element, already read by the caller (see ParseAgeKeys). They are the
	// only keys used: SOPS_AGE_KEY*, ~/.ssh and ~/.config/sops are ignored.
	AgeIdentities []string
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
	// MaxFileSize caps the size of a file DecryptFiles decrypts.
	// Default DefaultMaxFileSize.
	MaxFileSize int64
	// Reveal, when set, is handed every value decrypted, in any kind of
	// document (a ConfigMap's as much as a Secret's), before it is
	// used: for masking.
	Reveal func(plaintexts []string)
}

// Decryptor decrypts SOPS data with a fixed set of age identities and,
// optionally, AWS KMS. It holds no per-call state and is safe for
// concurrent use.
type Decryptor struct {
	identities  sopsage.ParsedIdentities
	awsKMS      bool
	maxFileSize int64
	reveal      func([]string)
}

// New parses the identities and returns a Decryptor that uses only them,
// and AWS KMS if opts.AWSKMS is set. When no key can decrypt a document,
// the error names every key the document lists and why it failed.
func New(opts Options) (*Decryptor, error) {
	ids := make(sopsage.ParsedIdentities, 0, len(opts.AgeIdentities))
	for i, s := range opts.AgeIdentities {
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
	return &Decryptor{identities: ids, awsKMS: opts.AWSKMS, maxFileSize: limit, reveal: opts.Reveal}, nil
}
