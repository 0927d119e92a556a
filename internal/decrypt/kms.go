package decrypt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/smithy-go"
	"github.com/getsops/sops/v3/keyservice"
	sopskms "github.com/getsops/sops/v3/kms"
)

// decryptKMS decrypts a data key with AWS KMS through sops's own key
// source: it loads the AWS SDK's default configuration (credentials,
// endpoints, the file's aws_profile if any), assumes the key's role through
// STS if it has one, and calls KMS Decrypt with the key's encryption
// context. Nothing is written to disk.
func (s *keyService) decryptKMS(k *keyservice.KmsKey, ciphertext []byte) ([]byte, error) {
	if !s.awsKMS {
		return nil, ErrKMSDisabled
	}
	var encCtx map[string]*string
	for name, value := range k.GetContext() {
		if encCtx == nil {
			encCtx = make(map[string]*string, len(k.GetContext()))
		}
		encCtx[name] = &value
	}
	mk := sopskms.MasterKey{
		Arn:               k.GetArn(),
		Role:              k.GetRole(),
		EncryptionContext: encCtx,
		AwsProfile:        k.GetAwsProfile(),
		EncryptedKey:      string(ciphertext),
	}
	plain, err := mk.DecryptContext(s.ctx)
	if err != nil {
		if ctxErr := s.ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, kmsError(err)
	}
	return plain, nil
}

// errNoAWSCredentials is ErrNoCredentials, for AWS.
var errNoAWSCredentials = missingCredentials("AWS credentials")

// AWS error codes, from KMS (JSON protocol) and STS (query protocol).
var (
	deniedCodes = map[string]bool{
		"AccessDeniedException":               true, // KMS: no permission on the key
		"AccessDenied":                        true, // STS: not allowed to assume the role
		"UnrecognizedClientException":         true, // unknown access key or bad session token
		"InvalidClientTokenId":                true,
		"InvalidSignatureException":           true, // wrong secret key
		"SignatureDoesNotMatch":               true,
		"ExpiredTokenException":               true,
		"ExpiredToken":                        true,
		"MissingAuthenticationTokenException": true,
		"MissingAuthenticationToken":          true,
		"IncompleteSignature":                 true,
		"InvalidIdentityToken":                true, // web identity (OIDC) token rejected
	}
	notFoundCodes   = map[string]bool{"NotFoundException": true}
	ciphertextCodes = map[string]bool{"InvalidCiphertextException": true, "IncorrectKeyException": true}
)

// kmsError turns an error from sops's KMS key source into one that says
// why, wrapping a sentinel where one applies. AWS error codes and messages
// are kept: they name principals, roles and key ARNs, never key material
// (a Decrypt request carries only the encrypted data key).
func kmsError(err error) error {
	step := ""
	var op *smithy.OperationError
	if errors.As(err, &op) && op.Service() == "STS" {
		step = "assuming the role: "
	}
	var api smithy.APIError
	hasAPI := errors.As(err, &api)
	switch {
	case noCredentials(err) && hasAPI:
		// A credential source (STS, for a web identity token or a
		// profile's role) refused.
		return fmt.Errorf("%s%w: %s failed: %w", step, errNoAWSCredentials, innermostOperation(err), apiError(api))
	case noCredentials(err):
		return fmt.Errorf("%s%w: the SDK's default chain (environment, shared config and profile, web identity, container and instance credentials) found none: %s", step, errNoAWSCredentials, chainDetail(err))
	case hasAPI:
		return fmt.Errorf("%s%w", step, apiError(api))
	}
	return fmt.Errorf("%s%v", step, err)
}

// apiError classifies an AWS error by its code.
func apiError(api smithy.APIError) error {
	detail := api.ErrorCode()
	if msg := api.ErrorMessage(); msg != "" {
		detail += ": " + msg
	}
	switch code := api.ErrorCode(); {
	case deniedCodes[code]:
		return fmt.Errorf("%w (%s)", ErrAccessDenied, detail)
	case notFoundCodes[code]:
		return fmt.Errorf("%w (%s)", ErrKeyNotFound, detail)
	case ciphertextCodes[code]:
		return fmt.Errorf("%w: wrong encryption context, or the encrypted data key was changed (%s)", ErrInvalidCiphertext, detail)
	}
	return fmt.Errorf("AWS error %s", detail)
}

// The AWS SDK's wrapping when the credential chain fails: the service
// clients' auth middleware, the v4 signer and the credentials cache. They
// carry no typed error, so they are matched by message.
var credentialFailures = []string{"get identity: ", "failed to retrieve credentials", "failed to refresh cached credentials"}

func noCredentials(err error) bool {
	msg := err.Error()
	for _, m := range credentialFailures {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// innermostOperation names the last AWS operation in err's chain, e.g.
// "STS AssumeRoleWithWebIdentity".
func innermostOperation(err error) string {
	name := "the credential source"
	for e := err; e != nil; e = errors.Unwrap(e) {
		if op, ok := e.(*smithy.OperationError); ok {
			name = op.Service() + " " + op.Operation()
		}
	}
	return name
}

// chainDetail keeps the part of the SDK's message that says what the
// chain tried last, without the operation prefixes.
func chainDetail(err error) string {
	msg := err.Error()
	for _, m := range credentialFailures {
		if i := strings.LastIndex(msg, m); i >= 0 {
			msg = strings.TrimLeft(msg[i+len(m):], ", :")
		}
	}
	return msg
}
