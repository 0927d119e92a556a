package source

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// Flux's keys of a GitHub App's Secret (spec.secretRef of a
// GitRepository with provider github).
const (
	githubAppIDKey                = "githubAppID"
	githubAppInstallationIDKey    = "githubAppInstallationID"
	githubAppInstallationOwnerKey = "githubAppInstallationOwner"
	githubAppPrivateKeyKey        = "githubAppPrivateKey"
	githubAppBaseURLKey           = "githubAppBaseURL"
	githubAPI                     = "https://api.github.com"
)

// githubApp is a GitHub App's credentials, as Flux reads them from a
// Secret: its ID, its installation (by ID, or by the account it is
// installed on), its private key, and the API it is registered with.
type githubApp struct {
	ID             int64
	InstallationID int64
	Owner          string
	Key            *rsa.PrivateKey
	keyPEM         string
	// BaseURL is the App's API (githubAppBaseURL, e.g.
	// https://github.example.com/api/v3), https://api.github.com when
	// the Secret names none.
	BaseURL string
}

// Secrets are the values never to show: the private key (and each of
// its lines, as a log may split it).
func (a githubApp) Secrets() []string {
	out := []string{a.keyPEM}
	for _, l := range strings.Split(a.keyPEM, "\n") {
		if l = strings.TrimSpace(l); len(l) > 16 {
			out = append(out, l)
		}
	}
	return out
}

// parseGitHubApp reads a GitHub App's Secret. A key it needs and lacks,
// or holds wrong, is named; no value is quoted.
func parseGitHubApp(data map[string]string) (githubApp, error) {
	var a githubApp
	var errs []error
	id, err := strconv.ParseInt(strings.TrimSpace(data[githubAppIDKey]), 10, 64)
	if err != nil || id <= 0 {
		errs = append(errs, fmt.Errorf("%s: want the App's numeric ID", githubAppIDKey))
	}
	a.ID = id
	a.Owner = strings.TrimSpace(data[githubAppInstallationOwnerKey])
	if v := strings.TrimSpace(data[githubAppInstallationIDKey]); v != "" {
		if a.InstallationID, err = strconv.ParseInt(v, 10, 64); err != nil || a.InstallationID <= 0 {
			errs = append(errs, fmt.Errorf("%s: want the installation's numeric ID", githubAppInstallationIDKey))
		}
	} else if a.Owner == "" {
		errs = append(errs, fmt.Errorf("%s (or %s): required", githubAppInstallationIDKey, githubAppInstallationOwnerKey))
	}
	a.keyPEM = data[githubAppPrivateKeyKey]
	if a.Key, err = parseRSAKey(a.keyPEM); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", githubAppPrivateKeyKey, err))
	}
	a.BaseURL = strings.TrimSuffix(strings.TrimSpace(data[githubAppBaseURLKey]), "/")
	if a.BaseURL == "" {
		a.BaseURL = githubAPI
	} else if u, err := neturl.Parse(a.BaseURL); err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.User != nil {
		errs = append(errs, fmt.Errorf("%s: want an http(s) URL without credentials", githubAppBaseURLKey))
	}
	return a, errors.Join(errs...)
}

// parseRSAKey reads a GitHub App's private key: PEM, PKCS #1 (as GitHub
// hands it out) or PKCS #8.
func parseRSAKey(s string) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("want a PEM private key (the .pem GitHub gave for the App)")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("not an RSA private key")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an RSA private key")
	}
	return rk, nil
}

// gitServer is where the App's installation token is sent to clone:
// GitHub's for GitHub's API, else the origin of the App's API (a GitHub
// Enterprise Server serves both).
func (a githubApp) gitServer() string {
	if a.BaseURL == githubAPI {
		return "https://github.com"
	}
	u, _ := neturl.Parse(a.BaseURL)
	return u.Scheme + "://" + u.Host
}

// appJWT is the App's JSON Web Token (RS256) GitHub's App API takes:
// issued by the App, a minute in the past (clock drift), valid for nine.
func (a githubApp) appJWT(now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(9 * time.Minute).Unix(), "iss": strconv.FormatInt(a.ID, 10)})
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, a.Key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// appTransport signs the requests to the App's API (origin) with its
// JWT, and no request elsewhere.
type appTransport struct {
	base   http.RoundTripper
	origin string
	jwt    string
}

func (t *appTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme+"://"+req.URL.Host != t.origin {
		return nil, fmt.Errorf("the GitHub App's API is %s: its token is sent nowhere else", t.origin)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.jwt)
	return t.base.RoundTrip(req)
}

// mintInstallationToken exchanges the App's JWT for an installation
// token (POST /app/installations/{id}/access_tokens, through go-github's
// Apps API), finding the installation by its account when only the
// owner is named. Only the App's API is sent anything; redirects are
// not followed.
func mintInstallationToken(ctx context.Context, a githubApp, base http.RoundTripper) (string, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	jwt, err := a.appJWT(time.Now())
	if err != nil {
		return "", err
	}
	u, err := neturl.Parse(a.BaseURL)
	if err != nil {
		return "", err
	}
	hc := &http.Client{Transport: &appTransport{base: base, origin: u.Scheme + "://" + u.Host, jwt: jwt},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: time.Minute}
	gh := github.NewClient(hc)
	if a.BaseURL != githubAPI {
		if gh, err = gh.WithEnterpriseURLs(a.BaseURL, a.BaseURL); err != nil {
			return "", err
		}
	}
	id := a.InstallationID
	if id == 0 {
		installations, _, err := gh.Apps.ListInstallations(ctx, &github.ListOptions{PerPage: 100})
		if err != nil {
			return "", fmt.Errorf("listing the App's installations at %s: %s", a.BaseURL, apiStatus(err))
		}
		for _, in := range installations {
			if strings.EqualFold(in.GetAccount().GetLogin(), a.Owner) {
				id = in.GetID()
			}
		}
		if id == 0 {
			return "", fmt.Errorf("the App %d is not installed on %s (%s)", a.ID, a.Owner, githubAppInstallationOwnerKey)
		}
	}
	tok, _, err := gh.Apps.CreateInstallationToken(ctx, id, nil)
	if err != nil {
		return "", fmt.Errorf("minting an installation token of the App %d (installation %d) at %s: %s", a.ID, id, a.BaseURL, apiStatus(err))
	}
	if tok.GetToken() == "" {
		return "", fmt.Errorf("minting an installation token of the App %d at %s: no token in the answer", a.ID, a.BaseURL)
	}
	return tok.GetToken(), nil
}

// apiStatus is what GitHub answered, by status only: its words are
// never quoted.
func apiStatus(err error) string {
	var re *github.ErrorResponse
	if errors.As(err, &re) && re.Response != nil {
		return re.Response.Status
	}
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return ue.Op + " " + ue.URL + ": " + errors.Unwrap(ue).Error()
	}
	return err.Error()
}
