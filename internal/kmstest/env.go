package kmstest

import (
	"os"
	"path/filepath"
	"testing"
)

// isolated are the AWS variables that could reach real credentials, a real
// endpoint or the developer's ~/.aws: Setenv unsets them all.
var isolated = []string{
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_ACCESS_KEY", "AWS_SECRET_KEY",
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE",
	"AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME", "AWS_WEB_IDENTITY_TOKEN_FILE",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	"AWS_ENDPOINT_URL", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "AWS_DEFAULT_REGION",
	"AWS_CA_BUNDLE", "AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT",
}

// Setenv points the AWS SDK at the server for the rest of the test and
// cuts it off from the machine it runs on: KMS, STS and EKS endpoints go to the
// server, the region is Region, every credential variable is unset, the
// shared config and credentials files are empty paths in a temp dir (so
// ~/.aws is never read) and EC2 instance metadata is disabled (so a missing
// credential fails at once rather than after IMDS timeouts). The test
// then adds credentials with SetCredentials, or a web identity.
//
// It uses t.Setenv, so the test cannot be parallel.
func (s *Server) Setenv(t testing.TB) {
	t.Helper()
	for _, name := range isolated {
		Unsetenv(t, name)
	}
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_REGION", Region)
	t.Setenv("AWS_ENDPOINT_URL_KMS", s.URL())
	t.Setenv("AWS_ENDPOINT_URL_STS", s.URL())
	t.Setenv("AWS_ENDPOINT_URL_EKS", s.URL())
	t.Setenv("AWS_ENDPOINT_URL_ECR", s.URL())
}

// SetCredentials puts a static access key in the environment, as CI does
// with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func SetCredentials(t testing.TB, accessKeyID, secretAccessKey string) {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", accessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secretAccessKey)
}

// Unsetenv unsets name for the rest of the test and restores it after.
// The AWS SDK tells an empty variable from an absent one
// (AWS_ENDPOINT_URL), so t.Setenv(name, "") is not enough.
func Unsetenv(t testing.TB, name string) {
	t.Helper()
	t.Setenv(name, "")
	os.Unsetenv(name)
}
