package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"syscall"
	"time"
)

// DefaultRequestTimeout bounds each request when the kubeconfig flags set
// none (kubectl's --request-timeout defaults to no limit, which lets a
// frozen API server hang a run for ever). Waiting for objects to become
// ready is bounded separately, by the run's timeout.
const DefaultRequestTimeout = 30 * time.Second

// Retry bounds: a transient failure (the API server restarting, 5xx, 429
// without Retry-After) is retried up to retryAttempts times in all, with
// exponential backoff from retryBase, jittered. Answers that carry
// Retry-After are client-go's to wait for and retry.
const (
	retryAttempts = 5
	retryBase     = 250 * time.Millisecond
)

// TimeoutError is a request the API server did not answer in time. Its
// message states only the fact: how to allow more time is each front
// end's to say (the CLI's --request-timeout, say), from After.
type TimeoutError struct {
	Method, URL string
	// After is the bound the request hit.
	After time.Duration
}

func (e *TimeoutError) Error() string {
	// Not the request: url.Error, which wraps this, names it.
	return fmt.Sprintf("the API server did not answer within %s", e.After)
}

// Timeout makes it a net.Error timeout, as callers test for.
func (e *TimeoutError) Timeout() bool   { return true }
func (e *TimeoutError) Temporary() bool { return true }

// reliable is the transport under every client: each attempt bounded by
// timeout (watches aside), and transient failures retried with bounded
// backoff while the request's context allows. A request is retried only
// when it can be sent again unchanged: its body can be replayed, and it
// either never reached the server (connection refused or reset before an
// answer; for idempotent methods, also when the connection broke) or the
// server answered 429 or 502/503/504, which mean it did not act. A 500
// (etcd changing leaders, say) is retried for requests that can be
// repeated to the same effect: reads, dry-runs and server-side applies.
// A timeout is not retried: a frozen server would multiply it.
type reliable struct {
	next    http.RoundTripper
	timeout time.Duration
	// sleep waits between attempts; time.Sleep-like, but ends with ctx.
	sleep func(ctx context.Context, d time.Duration) error
}

func newReliable(next http.RoundTripper, timeout time.Duration) *reliable {
	return &reliable{next: next, timeout: timeout, sleep: sleepCtx}
}

func (t *reliable) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := t.once(req)
		wait, retry := t.retryable(req, resp, err, attempt)
		if !retry {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		if serr := t.sleep(req.Context(), wait); serr != nil {
			if err == nil {
				err = fmt.Errorf("%s %s: %s", req.Method, req.URL.Redacted(), resp.Status)
			}
			return nil, err
		}
		if req.Body != nil && req.GetBody != nil {
			body, berr := req.GetBody()
			if berr != nil {
				return nil, berr
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// once sends one attempt within t.timeout.
func (t *reliable) once(req *http.Request) (*http.Response, error) {
	if t.timeout <= 0 || req.URL.Query().Get("watch") == "true" {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		if ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil {
			return nil, &TimeoutError{Method: req.Method, URL: req.URL.Redacted(), After: t.timeout}
		}
		return nil, err
	}
	// The deadline covers reading the body too; it ends with the body.
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel, ctx: ctx, parent: req.Context(), req: req, after: t.timeout}
	return resp, nil
}

// retryable says whether to send req again after this attempt, and after
// how long.
func (t *reliable) retryable(req *http.Request, resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if attempt >= retryAttempts || req.Context().Err() != nil {
		return 0, false
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return 0, false
	}
	backoff := retryBase << (attempt - 1)
	backoff += time.Duration(rand.Int64N(int64(backoff) / 2))
	if err != nil {
		return backoff, resendable(req.Method, err)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		// client-go itself waits and retries answers that carry
		// Retry-After: retrying them here too would multiply its retries.
		return backoff, resp.Header.Get("Retry-After") == ""
	case http.StatusInternalServerError:
		return backoff, repeatable(req)
	}
	return 0, false
}

// repeatable reports whether sending req twice has the effect of sending
// it once: it reads, it is a dry-run, or it is a server-side apply (the
// same configuration applied again by the same manager changes nothing).
func repeatable(req *http.Request) bool {
	switch {
	case req.Method == http.MethodGet, req.Method == http.MethodHead:
		return true
	case req.URL.Query().Has("dryRun"):
		return true
	case req.Method == http.MethodPatch:
		return req.Header.Get("Content-Type") == "application/apply-patch+yaml"
	}
	return false
}

// resendable reports whether a request that failed with err may be sent
// again: it never reached the server (refused, or the connection could
// not be made), or it is idempotent (a POST is not) and the connection
// broke before an answer. A timeout is not: the server may be frozen.
func resendable(method string, err error) bool {
	var te *TimeoutError
	if errors.As(err, &te) {
		return false
	}
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial") {
		return true
	}
	broken := errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	return broken && method != http.MethodPost
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// cancelOnClose ends an attempt's deadline when its body is closed, and
// names the timeout when reading the body hits it.
type cancelOnClose struct {
	io.ReadCloser
	cancel      context.CancelFunc
	ctx, parent context.Context
	req         *http.Request
	after       time.Duration
}

func (b *cancelOnClose) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.ctx.Err() == context.DeadlineExceeded && b.parent.Err() == nil {
		return n, &TimeoutError{Method: b.req.Method, URL: b.req.URL.Redacted(), After: b.after}
	}
	return n, err
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
