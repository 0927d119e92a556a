// Package gcp reaches Google Cloud without gcloud: credentials read from
// the environment the way Google's client libraries and sops read them,
// and GKE clusters by name, without a kubeconfig or
// gke-gcloud-auth-plugin.
package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// CloudPlatformScope is the OAuth scope Cloud KMS and GKE take.
const CloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// ErrNoCredentials: the environment holds no Google credentials.
var ErrNoCredentials = errors.New("no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS to a credentials file (google-github-actions/auth does, for Workload Identity Federation or a service account key), or GOOGLE_OAUTH_ACCESS_TOKEN")

// Options say where credentials come from.
type Options struct {
	// Getenv reads the environment; nil reads none.
	Getenv func(string) string
	// HTTPClient reaches Google's token endpoints (and, for a credential
	// source URL, GitHub's OIDC endpoint); nil means http.DefaultClient.
	HTTPClient *http.Client
}

// Credentials are where a token source came from.
type Credentials struct {
	oauth2.TokenSource
	// Source names the variable and the kind of credentials, for
	// messages: "GOOGLE_APPLICATION_CREDENTIALS (external_account)".
	Source string
}

// The credential types accepted from a file: those gcloud and
// google-github-actions/auth write. Others (a client_credentials.json for
// a browser flow, for one) are refused rather than run.
var fileTypes = map[google.CredentialsType]bool{
	google.ServiceAccount:             true,
	google.ExternalAccount:            true,
	google.AuthorizedUser:             true,
	google.ImpersonatedServiceAccount: true,
}

// TokenSource returns tokens for scopes from the first of:
// GOOGLE_OAUTH_ACCESS_TOKEN (a token as is, as sops takes it),
// GOOGLE_CREDENTIALS (sops's: a credentials file's path or its JSON), and
// GOOGLE_APPLICATION_CREDENTIALS (application default credentials: a
// credentials file, as google-github-actions/auth writes one for Workload
// Identity Federation or a service account key). gcloud's own
// configuration and the metadata server are not tried. ctx bounds every
// later refresh. Errors name the variable, never the credentials.
func TokenSource(ctx context.Context, opts Options, scopes ...string) (*Credentials, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if opts.HTTPClient != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, opts.HTTPClient)
	}
	if tok := strings.TrimSpace(getenv("GOOGLE_OAUTH_ACCESS_TOKEN")); tok != "" {
		return &Credentials{oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"}), "GOOGLE_OAUTH_ACCESS_TOKEN"}, nil
	}
	for _, name := range []string{"GOOGLE_CREDENTIALS", "GOOGLE_APPLICATION_CREDENTIALS"} {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			continue
		}
		data := []byte(v)
		if !strings.HasPrefix(v, "{") {
			var err error
			if data, err = os.ReadFile(v); err != nil {
				return nil, fmt.Errorf("%s: reading the credentials file: %w", name, err)
			}
		}
		return fromJSON(ctx, name, data, scopes)
	}
	return nil, ErrNoCredentials
}

// fromJSON makes credentials of a checked type from a credentials file.
func fromJSON(ctx context.Context, name string, data []byte, scopes []string) (*Credentials, error) {
	var f struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		// json's syntax errors quote no more than a character.
		return nil, fmt.Errorf("%s: not a credentials file (JSON): %v", name, err)
	}
	t := google.CredentialsType(f.Type)
	if !fileTypes[t] {
		return nil, fmt.Errorf("%s: credentials of type %q are not supported (want service_account, external_account, authorized_user or impersonated_service_account)", name, f.Type)
	}
	creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, data, t, google.CredentialsParams{Scopes: scopes})
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", name, t, err)
	}
	return &Credentials{creds.TokenSource, fmt.Sprintf("%s (%s)", name, t)}, nil
}
