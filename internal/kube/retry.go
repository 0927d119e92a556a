package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// DefaultRequestTimeout bounds each request when the kubeconfig flags set
// none (kubectl's --request-timeout defaults to no limit, which lets a
// frozen API server hang a run for ever). Waiting for objects to become
// ready is bounded separately, by the run's timeout.
const DefaultRequestTimeout = 30 * time.Second

// Retry bounds: a transient failure (the API server restarting, 5xx,
// 429) is sent at most MaxAttempts times in all, with exponential backoff
// from retryBase, jittered, or longer when the answer asks for it
// (Retry-After); no attempt starts later than retryWithin after the first.
const (
	MaxAttempts = 5
	retryBase   = 250 * time.Millisecond
	retryWithin = 30 * time.Second
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
// backoff while the request's context allows. It is the one retry layer:
// client-go would retry on top of it (up to 10 times a GET whose
// connection broke, and any 429 or 5xx answer carrying Retry-After),
// multiplying the attempts and the time of one request, so what reliable
// hands back never invites that: answers lose their Retry-After (it was
// honoured here), and a broken connection is a BrokenError. A request is retried only
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
	// now tells the time, for retryWithin.
	now func() time.Time
}

func newReliable(next http.RoundTripper, timeout time.Duration) *reliable {
	return &reliable{next: next, timeout: timeout, sleep: sleepCtx, now: time.Now}
}

func (t *reliable) RoundTrip(req *http.Request) (*http.Response, error) {
	start := t.now()
	for attempt := 1; ; attempt++ {
		resp, err := t.once(req)
		wait, retry := t.retryable(req, resp, err, attempt)
		if retry && t.now().Add(wait).Sub(start) > retryWithin {
			retry = false
		}
		if !retry {
			return final(resp), gaveUp(err, attempt)
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		if serr := t.sleep(req.Context(), wait); serr != nil {
			if err == nil {
				err = fmt.Errorf("%s %s: %s", req.Method, req.URL.Redacted(), resp.Status)
			}
			return nil, gaveUp(err, attempt)
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
	if attempt >= MaxAttempts || req.Context().Err() != nil {
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
	backoff = max(backoff, retryAfter(resp))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return backoff, true
	case http.StatusInternalServerError:
		return backoff, repeatable(req)
	}
	return 0, false
}

// retryAfter is how long an answer asks to be given before the request
// is sent again: its Retry-After in seconds, as client-go reads it; 0
// when it asks nothing.
func retryAfter(resp *http.Response) time.Duration {
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || secs < 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}

// final is the answer handed back to client-go: without Retry-After on a
// 429 or 5xx, which client-go would wait for and retry (up to 10 times)
// although this transport has retried it already, or decided not to.
func final(resp *http.Response) *http.Response {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500) {
		resp.Header.Del("Retry-After")
	}
	return resp
}

// BrokenError is a request whose connection broke before the API server
// answered, each of the Attempts times it was sent. It says so in its own
// words, and wraps nothing: client-go sends a GET up to 10 times more
// when an error is, or says, a reset or closed connection.
type BrokenError struct {
	Attempts int
	// How the connection broke: "was reset", "closed", "was ended by the
	// API server (HTTP/2 GOAWAY)".
	How string
}

func (e *BrokenError) Error() string {
	return fmt.Sprintf("the connection %s before the API server answered (%d attempt(s))", e.How, e.Attempts)
}

// gaveUp is err as this transport hands it back after attempts: a
// BrokenError when client-go would take it for a connection to retry.
func gaveUp(err error, attempts int) error {
	var te *TimeoutError
	switch {
	case err == nil, errors.As(err, &te):
		return err
	case utilnet.IsConnectionReset(err) || strings.Contains(err.Error(), "connection reset by peer"):
		return &BrokenError{Attempts: attempts, How: "was reset"}
	case utilnet.IsHTTP2ConnectionLost(err) || strings.Contains(err.Error(), "GOAWAY"):
		return &BrokenError{Attempts: attempts, How: "was ended by the API server (HTTP/2 GOAWAY)"}
	case broken(err):
		return &BrokenError{Attempts: attempts, How: "closed"}
	}
	return err
}

// broken reports whether err says the connection broke, as client-go
// sees it (utilnet.IsProbableEOF and its kin).
func broken(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)
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
	return broken(err) && method != http.MethodPost
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
