// Package github posts a run's outcome to GitHub over the REST API: one
// sticky comment per marker on a pull request, one open issue per marker
// (drift), and commit statuses. It returns errors and never logs; the
// token stays inside the HTTP transport.
package github

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	gh "github.com/google/go-github/v62/github"
)

// DefaultAPIURL is github.com's REST API, used when GITHUB_API_URL is unset.
const DefaultAPIURL = "https://api.github.com/"

// ErrNoPermission is wrapped by errors from calls GitHub answered with 403
// or 404: a read-only token on a pull request from a fork, or a workflow
// without "pull-requests: write", "statuses: write" or "issues: write".
// Callers may degrade it to a warning. Rate limiting (also a 403) is not
// ErrNoPermission.
var ErrNoPermission = errors.New("no permission (GitHub answered 403 or 404)")

// Client talks to one GitHub (or GitHub Enterprise Server) REST API.
type Client struct {
	api     *gh.Client
	graphql string // the GraphQL endpoint of the same server
	server  string // the server's web address (WithServerURL), or empty
	retry   *retryTransport

	mu    sync.Mutex
	login string // the token's identity, once known
}

type config struct {
	httpClient *http.Client
	serverURL  string
}

// Option configures New.
type Option func(*config)

// WithHTTPClient sends requests through hc (its transport, timeout,
// proxy); retries and the token are added on top of hc's transport.
// Without it, requests go through a copy of http.DefaultTransport; either way each
// attempt is bounded by 30 seconds.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) { c.httpClient = hc }
}

// WithServerURL names the server's web address, the value of
// GITHUB_SERVER_URL (https://github.com, https://ghe.example): what
// WebURL returns, instead of guessing it from the API's address.
func WithServerURL(server string) Option {
	return func(c *config) { c.serverURL = strings.TrimSuffix(server, "/") }
}

// New returns a client authenticating with token against apiURL, the
// value of GITHUB_API_URL: https://api.github.com/ when empty, or a GitHub
// Enterprise Server API such as https://ghe.example/api/v3.
func New(token, apiURL string, opts ...Option) (*Client, error) {
	if token == "" {
		return nil, errors.New("GitHub token is empty")
	}
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	base, err := url.Parse(apiURL)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("GitHub API URL %q is not an absolute http(s) URL", apiURL)
	}
	// go-github resolves paths relative to BaseURL, which must end in a
	// slash or the last segment (v3 in /api/v3) would be replaced.
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	base.RawPath = ""

	var c config
	for _, o := range opts {
		o(&c)
	}
	hc := &http.Client{}
	if c.httpClient != nil {
		*hc = *c.httpClient
	}
	retry := newRetryTransport(hc.Transport)
	hc.Transport = retry
	api := gh.NewClient(hc).WithAuthToken(token)
	api.BaseURL = base
	api.UserAgent = "kustomize-deploy"
	return &Client{api: api, graphql: graphqlURL(base), server: c.serverURL, retry: retry}, nil
}

// graphqlURL is the GraphQL endpoint next to the REST API at base:
// https://api.github.com/graphql, or https://ghe.example/api/graphql for
// GitHub Enterprise Server's https://ghe.example/api/v3/.
func graphqlURL(base *url.URL) string {
	u := *base
	if p, ok := strings.CutSuffix(u.Path, "/api/v3/"); ok {
		u.Path = p + "/api/graphql"
	} else {
		u.Path += "graphql"
	}
	return u.String()
}

// wrap says what was being done, and marks 403 and 404 answers with
// ErrNoPermission.
func wrap(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if noPermission(err) {
		return fmt.Errorf("%s: %w: %w", what, ErrNoPermission, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func noPermission(err error) bool {
	var rate *gh.RateLimitError
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &rate) || errors.As(err, &abuse) {
		return false
	}
	var resp *gh.ErrorResponse
	if !errors.As(err, &resp) || resp.Response == nil {
		return false
	}
	return resp.Response.StatusCode == http.StatusForbidden || resp.Response.StatusCode == http.StatusNotFound
}
