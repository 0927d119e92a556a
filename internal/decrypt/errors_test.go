package decrypt

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/smithy-go"
)

func TestKMSErrorClassification(t *testing.T) {
	t.Parallel()
	op := func(service, operation string, err error) error {
		return &smithy.OperationError{ServiceID: service, OperationName: operation, Err: err}
	}
	api := func(code, msg string) error { return &smithy.GenericAPIError{Code: code, Message: msg} }
	tests := []struct {
		name string
		err  error
		want error
		text string
	}{
		{
			name: "KMS access denied",
			err:  fmt.Errorf("failed to decrypt sops data key with AWS KMS: %w", op("KMS", "Decrypt", api("AccessDeniedException", "User: x is not authorized"))),
			want: ErrAccessDenied,
			text: "access denied (AccessDeniedException: User: x is not authorized)",
		},
		{
			name: "unknown access key",
			err:  op("KMS", "Decrypt", api("UnrecognizedClientException", "The security token included in the request is invalid.")),
			want: ErrAccessDenied,
			text: "access denied (UnrecognizedClientException",
		},
		{
			name: "role not assumable",
			err:  fmt.Errorf("failed to assume role 'r': %w", op("STS", "AssumeRole", api("AccessDenied", "not authorized"))),
			want: ErrAccessDenied,
			text: "assuming the role: access denied (AccessDenied: not authorized)",
		},
		{
			name: "key not found",
			err:  op("KMS", "Decrypt", api("NotFoundException", "Key 'k' does not exist")),
			want: ErrKeyNotFound,
			text: "key not found (NotFoundException: Key 'k' does not exist)",
		},
		{
			name: "wrong context",
			err:  op("KMS", "Decrypt", api("InvalidCiphertextException", "")),
			want: ErrInvalidCiphertext,
			text: "wrong encryption context, or the encrypted data key was changed (InvalidCiphertextException)",
		},
		{
			name: "other AWS error",
			err:  op("KMS", "Decrypt", api("DisabledException", "arn is disabled.")),
			text: "AWS error DisabledException: arn is disabled.",
		},
		{
			name: "empty credential chain",
			err:  op("KMS", "Decrypt", errors.New("get identity: get credentials: failed to refresh cached credentials, no EC2 IMDS role found")),
			want: ErrNoCredentials,
			text: "found none: no EC2 IMDS role found",
		},
		{
			name: "credential source refused",
			err: op("KMS", "Decrypt", fmt.Errorf("get identity: get credentials: failed to refresh cached credentials, %w",
				fmt.Errorf("failed to retrieve credentials, %w", op("STS", "AssumeRoleWithWebIdentity", api("ExpiredTokenException", "Token expired"))))),
			want: ErrNoCredentials,
			text: "no AWS credentials: STS AssumeRoleWithWebIdentity failed: access denied (ExpiredTokenException: Token expired)",
		},
		{
			name: "bad ARN",
			err:  errors.New("no valid ARN found in 'arn:aws:kms:nope'"),
			text: "no valid ARN found in 'arn:aws:kms:nope'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := kmsError(tt.err)
			if tt.want != nil && !errors.Is(got, tt.want) {
				t.Errorf("kmsError = %v, want it to wrap %v", got, tt.want)
			}
			if !strings.Contains(got.Error(), tt.text) {
				t.Errorf("kmsError = %q, want it to contain %q", got, tt.text)
			}
		})
	}
}

func TestDataKeyErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *DataKeyError
		want string
	}{
		{
			name: "one group",
			err: &DataKeyError{Groups: 1, Threshold: 1, Keys: []*KeyError{
				{Type: "age", Key: "age1abc", Err: ErrNoMatchingIdentity},
				{Type: "kms", Key: "arn:aws:kms:r:1:key/k", Role: "arn:aws:iam::1:role/r", Err: ErrKMSDisabled},
				{Type: "pgp", Key: "ABCD", Err: ErrUnsupportedKey},
			}},
			want: "cannot decrypt the data key: age recipient age1abc: no matching age identity; " +
				"AWS KMS key arn:aws:kms:r:1:key/k (role arn:aws:iam::1:role/r): not tried: AWS KMS decryption is disabled; " +
				"PGP key ABCD: key type not supported (only age, PGP, AWS KMS, Vault transit, GCP KMS and Azure Key Vault are)",
		},
		{
			name: "shamir groups",
			err:  &DataKeyError{Groups: 3, Threshold: 2, Keys: []*KeyError{{Type: "age", Key: "age1abc", Err: ErrNoMatchingIdentity}}},
			want: "cannot decrypt the data key (2 of its 3 key groups are needed): age recipient age1abc: no matching age identity",
		},
		{
			name: "no keys",
			err:  &DataKeyError{},
			want: "cannot decrypt the data key: the sops metadata lists no usable key",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
