package github

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry policy: GitHub answers 5xx during incidents and secondary rate
// limits (403 or 429) when many jobs write at once; both pass within
// seconds to a minute. A run retries a few times, waits what GitHub asks
// for (Retry-After, X-RateLimit-Reset) if that is not too long, and then
// gives up with GitHub's answer.
const (
	// attemptTimeout bounds each attempt, reading the response included.
	attemptTimeout = 30 * time.Second
	// maxAttempts is how often a request is sent at most.
	maxAttempts = 3
	// maxWait is the longest wait between attempts; a longer Retry-After
	// or rate limit reset is not waited for.
	maxWait = time.Minute
	// secondaryWait is what GitHub's documentation says to wait on a
	// secondary rate limit that names no time.
	secondaryWait = time.Minute
)

// retryTransport resends requests GitHub may answer differently a moment
// later: 500, 502, 503 and 504, 429, and rate limits (403 with Retry-After,
// X-RateLimit-Remaining: 0 or a "secondary rate limit" message). A failed
// connection is retried for GET only: a POST may have been processed, and
// a second comment is worse than none.
type retryTransport struct {
	base    http.RoundTripper
	timeout time.Duration // per attempt
	sleep   func(ctx context.Context, d time.Duration) error
	now     func() time.Time
}

func newRetryTransport(base http.RoundTripper) *retryTransport {
	if base == nil {
		// A pool of its own: whoever else shares http.DefaultTransport
		// (an embedding program, a test's httptest.Server.Close) may close
		// its idle connections under a request of ours.
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &retryTransport{base: base, timeout: attemptTimeout, sleep: sleepCtx, now: time.Now}
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := t.send(req)
		wait, retry := t.backoff(req, resp, err, attempt)
		if !retry || attempt >= maxAttempts || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		if deadline, ok := req.Context().Deadline(); ok && t.now().Add(wait).After(deadline) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		if serr := t.sleep(req.Context(), wait); serr != nil {
			return nil, serr
		}
		next := req.Clone(req.Context())
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, gerr
			}
			next.Body = body
		}
		req = next
	}
}

// send is one attempt, bounded by t.timeout until its body is closed.
func (t *retryTransport) send(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends an attempt's context once its body is read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// backoff says whether the answer (resp, err) to the attempt-th sending of
// req is worth another attempt, and after how long.
func (t *retryTransport) backoff(req *http.Request, resp *http.Response, err error, attempt int) (time.Duration, bool) {
	exponential := time.Duration(1<<(attempt-1)) * time.Second // 1s, 2s
	if err != nil {
		return exponential, req.Method == http.MethodGet && req.Context().Err() == nil
	}
	switch resp.StatusCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if d, ok := t.retryAfter(resp); ok {
			return d, d <= maxWait
		}
		return exponential, true
	case http.StatusTooManyRequests, http.StatusForbidden:
		if d, ok := t.retryAfter(resp); ok {
			return d, d <= maxWait
		}
		if resp.Header.Get("X-RateLimit-Remaining") == "0" {
			reset, perr := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
			if perr != nil {
				return 0, false
			}
			d := time.Unix(reset, 0).Sub(t.now()) + time.Second
			return max(d, 0), d <= maxWait
		}
		if resp.StatusCode == http.StatusTooManyRequests || secondaryLimit(resp) {
			return secondaryWait, true
		}
	}
	return 0, false
}

// retryAfter reads Retry-After in seconds (GitHub never sends a date).
func (t *retryTransport) retryAfter(resp *http.Response) (time.Duration, bool) {
	s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After")))
	if err != nil || s < 0 {
		return 0, false
	}
	return time.Duration(s) * time.Second, true
}

// secondaryLimit reports whether a 403 is a secondary rate limit, which
// GitHub says in the message only. The body is put back for the caller.
func secondaryLimit(resp *http.Response) bool {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return bytes.Contains(bytes.ToLower(data), []byte("secondary rate limit"))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
