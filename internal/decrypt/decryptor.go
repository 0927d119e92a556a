// Package decrypt decrypts SOPS-encrypted files and manifests with age
// identities, the way Flux's kustomize-controller does, through the sops
// library (never the CLI) and without reading keys from the environment.
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
// cannot decrypt verbatim, and they may hold secrets. Our errors carry what
// the user needs.
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
	// MaxFileSize caps the size of a file DecryptFiles decrypts.
	// Default DefaultMaxFileSize.
	MaxFileSize int64
}

// Decryptor decrypts SOPS data with a fixed set of age identities.
// It holds no per-call state and is safe for concurrent use.
type Decryptor struct {
	identities  sopsage.ParsedIdentities
	maxFileSize int64
}

// New parses the identities and returns a Decryptor that uses only them.
// With no identities every encrypted input fails with an error naming its
// recipients.
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
	return &Decryptor{identities: ids, maxFileSize: limit}, nil
}
