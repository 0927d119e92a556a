package github

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recordSleeps makes c's retries record their waits instead of waiting.
func recordSleeps(c *Client) *[]time.Duration {
	var waits []time.Duration
	c.retry.sleep = func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}
	return &waits
}

func setStatus(c *Client) error {
	return c.SetStatus(context.Background(), "o", "r", "abc", Status{State: StateSuccess, Context: "kustomize-deploy/web"})
}

func TestRetryServerError(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("POST", "/repos/o/r/statuses/abc", "", 502, `<html>Bad Gateway</html>`)
	reg.register("POST", "/repos/o/r/statuses/abc", "", 503, `{"message":"unavailable"}`)
	reg.register("POST", "/repos/o/r/statuses/abc", "", 201, `{}`)
	c := newClient(t, reg.URL())
	waits := recordSleeps(c)

	if err := setStatus(c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, *waits); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
	calls := reg.Calls()
	if len(calls) != 3 || calls[2].Body != calls[0].Body || calls[2].Body == "" {
		t.Errorf("the retried request lost its body: %+v", calls)
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("POST", "/repos/o/r/statuses/abc", "", 403, `{"message":"You have exceeded a secondary rate limit."}`, "Retry-After", "7")
	reg.register("POST", "/repos/o/r/statuses/abc", "", 201, `{}`)
	c := newClient(t, reg.URL())
	waits := recordSleeps(c)

	if err := setStatus(c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{7 * time.Second}, *waits); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
}

// A secondary rate limit that names no time: GitHub says to wait a minute.
func TestRetrySecondaryRateLimitWithoutHeader(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.register("POST", "/repos/o/r/statuses/abc", "", 403, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`)
	reg.register("POST", "/repos/o/r/statuses/abc", "", 201, `{}`)
	c := newClient(t, reg.URL())
	waits := recordSleeps(c)

	if err := setStatus(c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{time.Minute}, *waits); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
}

func TestRetryPrimaryRateLimitUntilReset(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	now := time.Unix(1_900_000_000, 0)
	reset := strconv.FormatInt(now.Add(20*time.Second).Unix(), 10)
	reg.register("POST", "/repos/o/r/statuses/abc", "", 403, `{"message":"API rate limit exceeded"}`, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset)
	reg.register("POST", "/repos/o/r/statuses/abc", "", 201, `{}`)
	c := newClient(t, reg.URL())
	c.retry.now = func() time.Time { return now }
	waits := recordSleeps(c)

	if err := setStatus(c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{21 * time.Second}, *waits); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
}

// Waits longer than a minute, and waits past the context's deadline, are
// not waited for: GitHub's answer is returned.
func TestRetryGivesUpOnLongWaits(t *testing.T) {
	t.Parallel()
	t.Run("Retry-After of an hour", func(t *testing.T) {
		t.Parallel()
		reg := newRegistry(t)
		reg.register("POST", "/repos/o/r/statuses/abc", "", 429, `{"message":"slow down"}`, "Retry-After", "3600")
		c := newClient(t, reg.URL())
		waits := recordSleeps(c)
		if err := setStatus(c); err == nil || len(*waits) != 0 {
			t.Errorf("error %v after waits %v, want an error and no wait", err, *waits)
		}
	})
	t.Run("deadline before the retry", func(t *testing.T) {
		t.Parallel()
		reg := newRegistry(t)
		reg.register("POST", "/repos/o/r/statuses/abc", "", 502, `{}`)
		c := newClient(t, reg.URL())
		now := time.Now()
		c.retry.now = func() time.Time { return now }
		waits := recordSleeps(c)
		ctx, cancel := context.WithDeadline(context.Background(), now.Add(500*time.Millisecond))
		defer cancel()
		err := c.SetStatus(ctx, "o", "r", "abc", Status{State: StateSuccess, Context: "kustomize-deploy/web"})
		if err == nil || len(*waits) != 0 {
			t.Errorf("error %v after waits %v, want an error and no wait", err, *waits)
		}
	})
	t.Run("every attempt fails", func(t *testing.T) {
		t.Parallel()
		reg := newRegistry(t)
		for range maxAttempts {
			reg.register("POST", "/repos/o/r/statuses/abc", "", 500, `{}`)
		}
		c := newClient(t, reg.URL())
		if err := setStatus(c); err == nil {
			t.Error("no error after every attempt failed")
		}
	})
}

// failFirst fails its first request without an answer, as a reset
// connection does, then passes requests on.
type failFirst struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (f *failFirst) RoundTrip(req *http.Request) (*http.Response, error) {
	if f.n.Add(1) == 1 {
		return nil, errors.New("connection reset by peer")
	}
	return f.next.RoundTrip(req)
}

// A lost connection is retried for reads only: a POST may have been
// processed, and a second comment is worse than none.
func TestRetryConnectionErrorOnlyForGET(t *testing.T) {
	t.Parallel()
	t.Run("GET", func(t *testing.T) {
		t.Parallel()
		reg := newRegistry(t)
		reg.register("GET", "/user", "", 200, `{"login":"deployer"}`)
		c := newClient(t, reg.URL(), WithHTTPClient(&http.Client{Transport: &failFirst{next: ownTransport()}}))
		if login, err := c.Login(context.Background()); err != nil || login != "deployer" {
			t.Errorf("login %q %v", login, err)
		}
	})
	t.Run("POST", func(t *testing.T) {
		t.Parallel()
		reg := newRegistry(t) // no stubs: a retried POST would fail the test
		c := newClient(t, reg.URL(), WithHTTPClient(&http.Client{Transport: &failFirst{next: ownTransport()}}))
		if err := setStatus(c); err == nil {
			t.Error("a failed POST was retried")
		}
	})
}
