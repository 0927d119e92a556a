// Package gcp reaches Google Cloud without gcloud: credentials found the
// way Google's client libraries and sops find them (the environment,
// gcloud's application default credentials, the metadata server of GCE
// and GKE), and GKE clusters by name, without a kubeconfig or
// gke-gcloud-auth-plugin.
package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// CloudPlatformScope is the OAuth scope Cloud KMS and GKE take.
const CloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// ErrNoCredentials: no Google credentials were found (NoCredentialsError
// says where they were looked for).
var ErrNoCredentials = errors.New("no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS to a credentials file (google-github-actions/auth does, for Workload Identity Federation or a service account key), or GOOGLE_OAUTH_ACCESS_TOKEN; on GCE or GKE the metadata server is found by itself, or named by GCE_METADATA_HOST")

// NoCredentialsError is ErrNoCredentials with what was tried, in order.
type NoCredentialsError struct {
	// Tried says, for each source, why it gave none.
	Tried []string
}

func (e *NoCredentialsError) Error() string {
	return ErrNoCredentials.Error() + " (tried: " + strings.Join(e.Tried, "; ") + ")"
}

// Is makes errors.Is(err, ErrNoCredentials) hold.
func (e *NoCredentialsError) Is(target error) bool { return target == ErrNoCredentials }

// Options say where credentials come from.
type Options struct {
	// Getenv reads the environment; nil reads none, and looks for no
	// metadata server either.
	Getenv func(string) string
	// HTTPClient reaches Google's token endpoints (and, for a credential
	// source URL, GitHub's OIDC endpoint); nil means http.DefaultClient.
	HTTPClient *http.Client
	// Metadata reaches the metadata server and looks for it; its zero
	// value is this machine's.
	Metadata Metadata
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

// TokenSource returns tokens for scopes from the first of, in the order
// of Google's application default credentials:
//
//   - GOOGLE_OAUTH_ACCESS_TOKEN (a token as is, as sops takes it);
//   - GOOGLE_CREDENTIALS (sops's: a credentials file's path or its JSON);
//   - GOOGLE_APPLICATION_CREDENTIALS (a credentials file, as
//     google-github-actions/auth writes one for Workload Identity
//     Federation or a service account key);
//   - gcloud's application_default_credentials.json in its well-known
//     place (CLOUDSDK_CONFIG, else ~/.config/gcloud; %APPDATA%\gcloud on
//     Windows), as `gcloud auth application-default login` leaves it;
//   - the metadata server of a GCE VM or a GKE node (its service account;
//     in a pod with GKE Workload Identity, the bound Google service
//     account): at GCE_METADATA_HOST when set, else only where it is known
//     to be (findMetadata: METADATA_SERVER_DETECTION, the machine's DMI
//     product name, or metadata.google.internal resolving), so a machine
//     elsewhere (a GitHub-hosted runner) never waits on it.
//
// gcloud's own login (not application default) is not read. ctx bounds
// every later refresh. Errors name the variable or file, never the
// credentials; with none found, a NoCredentialsError says what was tried.
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
	tried := []string{"GOOGLE_OAUTH_ACCESS_TOKEN, GOOGLE_CREDENTIALS and GOOGLE_APPLICATION_CREDENTIALS are not set"}
	if opts.Getenv == nil {
		return nil, &NoCredentialsError{Tried: append(tried, "no environment to look further in")}
	}
	switch path := wellKnownFile(getenv); {
	case path == "":
		tried = append(tried, "gcloud's application default credentials: no home directory (HOME)")
	default:
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			return fromJSON(ctx, path, data, scopes)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("gcloud's application default credentials %s: %w", path, err)
		}
		tried = append(tried, "gcloud's application default credentials: no "+path)
	}
	host, how, err := findMetadata(ctx, getenv, opts.Metadata)
	switch {
	case err != nil:
		return nil, err
	case host == "":
		return nil, &NoCredentialsError{Tried: append(tried, "the metadata server: "+how)}
	}
	return metadataCredentials(ctx, opts.Metadata, host, how, scopes)
}

// wellKnownFile is where gcloud keeps application default credentials,
// as Google's libraries look for them; "" without a home directory.
func wellKnownFile(getenv func(string) string) string {
	const name = "application_default_credentials.json"
	if dir := strings.TrimSpace(getenv("CLOUDSDK_CONFIG")); dir != "" {
		return filepath.Join(dir, name)
	}
	if runtime.GOOS == "windows" {
		if dir := getenv("APPDATA"); dir != "" {
			return filepath.Join(dir, "gcloud", name)
		}
		return ""
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "gcloud", name)
	}
	return ""
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
