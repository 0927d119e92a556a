// Package gar logs in to Google's container registries (Artifact
// Registry, Container Registry): the registry credentials of a Flux
// source with provider gcp, an access token of Google's application
// default credentials (internal/gcp), as source-controller gets them.
package gar

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gcp"
)

// Username is the user a Google access token logs in as.
const Username = "oauth2accesstoken"

// registryHost is a Google registry's host, as Flux accepts it for
// provider gcp: gcr.io and its regional hosts, and Artifact Registry's
// <location>-docker.pkg.dev.
var registryHost = regexp.MustCompile(`^((([a-z0-9-]+\.)?gcr\.io)|([a-z0-9-]+-docker\.pkg\.dev))$`)

// CheckHost refuses a host (host or host:443) that is not a Google
// registry's, by name: a Google token is sent to Google only, whatever a
// source's URL names.
func CheckHost(host string) error {
	if registryHost.MatchString(strings.ToLower(strings.TrimSuffix(host, ":443"))) {
		return nil
	}
	return fmt.Errorf("%s is not a Google registry (<location>-docker.pkg.dev, gcr.io): a Google token is sent to Google only", host)
}

// Options say where Google credentials come from.
type Options struct {
	// Credentials are the application default credentials' options
	// (the environment, Google's token endpoints, the metadata server).
	Credentials gcp.Options
	// EnvironmentOnly takes only the credentials the environment names
	// (GOOGLE_OAUTH_ACCESS_TOKEN, GOOGLE_CREDENTIALS,
	// GOOGLE_APPLICATION_CREDENTIALS), never gcloud's login or the
	// metadata server's identity (an offline diff).
	EnvironmentOnly bool
}

// environment are the variables the environment names credentials in.
var environment = []string{"GOOGLE_OAUTH_ACCESS_TOKEN", "GOOGLE_CREDENTIALS", "GOOGLE_APPLICATION_CREDENTIALS"}

// Login returns the basic-auth credentials of the Google registry host:
// Username and an access token (a secret: the caller masks it). A host
// that is not Google's is refused by name (see CheckHost).
func Login(ctx context.Context, host string, o Options) (username, password string, err error) {
	if err := CheckHost(host); err != nil {
		return "", "", err
	}
	opts := o.Credentials
	if o.EnvironmentOnly {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		named := false
		for _, k := range environment {
			named = named || strings.TrimSpace(getenv(k)) != ""
		}
		if !named {
			return "", "", fmt.Errorf("Google registry %s: no Google credentials in the environment, and an offline diff takes none from the runner's own identity (gcloud's login, the metadata server)", host)
		}
		opts.Getenv = func(k string) string {
			for _, e := range environment {
				if k == e {
					return getenv(k)
				}
			}
			return ""
		}
	}
	creds, err := gcp.TokenSource(ctx, opts, gcp.CloudPlatformScope)
	if err != nil {
		return "", "", fmt.Errorf("Google registry %s: %w", host, err)
	}
	tok, err := creds.Token()
	if err != nil {
		return "", "", fmt.Errorf("Google registry %s: a token from %s: %w", host, creds.Source, err)
	}
	return Username, tok.AccessToken, nil
}
