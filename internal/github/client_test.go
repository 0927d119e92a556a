package github

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

const token = "ghs_s3cr3t"

func newClient(t *testing.T, apiURL string, opts ...Option) *Client {
	t.Helper()
	c, err := New(token, apiURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	// Retries wait on a recorded clock, never the wall clock.
	c.retry.sleep = func(context.Context, time.Duration) error { return nil }
	return c
}

// ownTransport is a pool of the test's own, as the client's default is.
func ownTransport() *http.Transport { return http.DefaultTransport.(*http.Transport).Clone() }

func TestNewDefaultsToGitHubCom(t *testing.T) {
	t.Parallel()
	c := newClient(t, "")
	if got := c.api.BaseURL.String(); got != DefaultAPIURL {
		t.Errorf("base URL %q, want %q", got, DefaultAPIURL)
	}
}

func TestNewKeepsEnterprisePath(t *testing.T) {
	t.Parallel()
	for _, apiURL := range []string{"https://ghe.example/api/v3", "https://ghe.example/api/v3/"} {
		if got := newClient(t, apiURL).api.BaseURL.String(); got != "https://ghe.example/api/v3/" {
			t.Errorf("%s: base URL %q, want https://ghe.example/api/v3/", apiURL, got)
		}
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ token, apiURL string }{
		{"", "https://api.github.com/"},
		{token, "api.github.com"},
		{token, "/api/v3"},
		{token, "ftp://ghe.example/"},
		{token, "https://ghe example/"},
	} {
		if _, err := New(tc.token, tc.apiURL); err == nil {
			t.Errorf("New(%q, %q) succeeded", tc.token, tc.apiURL)
		} else if strings.Contains(err.Error(), token) {
			t.Errorf("error shows the token: %v", err)
		}
	}
}

func TestEnterpriseBaseURL(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("POST", "/api/v3/repos/o/r/statuses/abc", "", 201, `{"id":1,"state":"success"}`)
	c := newClient(t, reg.URL()+"/api/v3")

	if err := c.SetStatus(context.Background(), "o", "r", "abc", Status{State: StateSuccess, Context: "kustomize-deploy/web"}); err != nil {
		t.Fatal(err)
	}
}

type headerTransport struct {
	name, value string
	next        http.RoundTripper
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(h.name, h.value)
	return h.next.RoundTrip(req)
}

func TestWithHTTPClient(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("POST", "/repos/o/r/statuses/abc", "", 201, `{}`)
	hc := &http.Client{Transport: headerTransport{"X-Via", "proxy", ownTransport()}}
	c := newClient(t, reg.URL(), WithHTTPClient(hc))

	if err := c.SetStatus(context.Background(), "o", "r", "abc", Status{State: StatePending, Context: "kustomize-deploy/web"}); err != nil {
		t.Fatal(err)
	}
	got := reg.Calls()[0].Header
	if got.Get("X-Via") != "proxy" {
		t.Errorf("request did not go through the given HTTP client")
	}
	if got.Get("Authorization") != "Bearer "+token {
		t.Errorf("Authorization %q, want the bearer token", got.Get("Authorization"))
	}
}

func TestNoPermission(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             []string
		want               bool
		wantMsg            string
	}{
		{"comment on a fork's PR", "POST", "/repos/o/r/issues/7/comments", 403, nil, true, "creating comment on o/r#7: "},
		{"status without statuses: write", "POST", "/repos/o/r/statuses/abc", 403, nil, true, "setting status kustomize-deploy/web on o/r@abc: "},
		{"private repository invisible", "POST", "/repos/o/r/statuses/abc", 404, nil, true, "setting status kustomize-deploy/web on o/r@abc: "},
		{"rate limited", "POST", "/repos/o/r/statuses/abc", 403, []string{"X-RateLimit-Remaining", "0"}, false, "setting status kustomize-deploy/web on o/r@abc: "},
		{"server error, after retries", "POST", "/repos/o/r/statuses/abc", 500, nil, false, "setting status kustomize-deploy/web on o/r@abc: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := newRegistry(t)
			if strings.Contains(tc.path, "comments") {
				reg.register("GET", "/user", "", 200, `{"login":"deployer"}`)
				reg.register("GET", tc.path, "per_page=100", 200, `[]`)
			}
			attempts := 1
			if tc.status >= 500 {
				attempts = maxAttempts
			}
			for range attempts {
				reg.register(tc.method, tc.path, "", tc.status, `{"message":"Resource not accessible by integration"}`, tc.header...)
			}
			c := newClient(t, reg.URL())

			var err error
			if strings.Contains(tc.path, "comments") {
				_, err = c.UpsertComment(context.Background(), "o", "r", 7, "<!-- m -->", "body")
			} else {
				err = c.SetStatus(context.Background(), "o", "r", "abc", Status{State: StateFailure, Context: "kustomize-deploy/web"})
			}
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, ErrNoPermission); got != tc.want {
				t.Errorf("errors.Is(err, ErrNoPermission) = %v, want %v: %v", got, tc.want, err)
			}
			if !strings.HasPrefix(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not start with %q", err, tc.wantMsg)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("error shows the token: %v", err)
			}
		})
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t) // no stubs: any request fails the test
	c := newClient(t, reg.URL())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := c.UpsertComment(ctx, "o", "r", 7, "<!-- m -->", "body")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if err := c.SetStatus(ctx, "o", "r", "abc", Status{State: StateSuccess, Context: "kustomize-deploy/web"}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
