// Package fetch holds what every fetch of a Flux source (a Git
// repository, an OCI artifact, a chart) obeys, whichever part of
// internal/source makes it: the limits on time and bytes, which
// redirects are followed and with which credentials, what of a failed
// request is said, how a URL is shown, which tag a semver range picks
// and what is left out of a tree. A source's URL is the repository's
// word, and a pull request's repository is hostile input.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Limits every source fetch obeys.
const (
	// Timeout bounds one source's fetch (or pull, or one chart's
	// download), from the first request to the last byte on disk.
	Timeout = 2 * time.Minute
	// MaxResponseBytes bounds the bytes one response may carry (a Git
	// pack, a chart, an index, a layer); MaxErrorBytes the bytes of a
	// failed request's body read (and never quoted).
	MaxResponseBytes = 512 << 20
	MaxErrorBytes    = 64 << 10
	// MaxRedirects bounds the redirects one request follows.
	MaxRedirects = 10
)

// IsInternal says whether addr is not a public address: loopback,
// link-local (where clouds serve instance metadata and credentials),
// private (RFC 1918, RFC 4193 unique local) or unspecified. A variable
// so that tests, whose servers all listen on loopback, can take one
// loopback address for a public one.
var IsInternal = func(addr netip.Addr) bool {
	addr = addr.Unmap()
	return addr.IsLoopback() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsInterfaceLocalMulticast() || addr.IsPrivate() || addr.IsUnspecified()
}

// lookup resolves a host name for the redirect rule.
var lookup = net.DefaultResolver.LookupNetIP

// internalHost says whether host (a name or an address) is, or resolves
// to, an internal address; a name that does not resolve is taken as
// internal, as nothing says it is not.
func internalHost(ctx context.Context, host string) bool {
	host = strings.Trim(host, "[]")
	if addr, err := netip.ParseAddr(host); err == nil {
		return IsInternal(addr)
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	addrs, err := lookup(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return true
	}
	for _, a := range addrs {
		if IsInternal(a) {
			return true
		}
	}
	return false
}

// RedirectError is a redirect refused: from a public host to an internal
// address, or past MaxRedirects.
type RedirectError struct {
	From, To string
	Why      string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("redirect from %s to %s refused: %s", e.From, e.To, e.Why)
}

// CheckRedirect is an http.Client's CheckRedirect for sources: at most
// MaxRedirects; never from a public host to an internal address (a
// source's server must not turn the runner into a client of its
// metadata service or its neighbours); and the credentials of the first
// request (Authorization, Cookie) are dropped as soon as the scheme, the
// host or the port changes, whatever Go's client would keep.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	origin := via[0].URL
	if len(via) >= MaxRedirects {
		return &RedirectError{From: redactURL(origin), To: redactURL(req.URL), Why: fmt.Sprintf("more than %d redirects", MaxRedirects)}
	}
	if err := checkHop(req.Context(), origin, req.URL); err != nil {
		return err
	}
	if !SameOrigin(origin, req.URL) {
		StripCredentials(req.Header)
	}
	return nil
}

// checkHop refuses a hop from origin (public) to an internal address.
func checkHop(ctx context.Context, origin, to *url.URL) error {
	if strings.EqualFold(origin.Hostname(), to.Hostname()) {
		return nil
	}
	if !internalHost(ctx, origin.Hostname()) && internalHost(ctx, to.Hostname()) {
		return &RedirectError{From: redactURL(origin), To: redactURL(to), Why: "a public host may not send the runner to an internal address (loopback, link-local, private)"}
	}
	return nil
}

// StripCredentials removes what authenticates a request.
func StripCredentials(h http.Header) {
	for _, k := range []string{"Authorization", "Proxy-Authorization", "Cookie"} {
		h.Del(k)
	}
}

// SameOrigin says whether a and b share scheme, host and port (the
// scheme's default port when none is written).
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := strings.TrimLeft(u.Port(), "0"); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https", "oci":
		return "443"
	}
	return ""
}

// redactURL is a request's u as Redact shows it, without its query or
// fragment (a signed URL's signature).
func redactURL(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment = "", ""
	return Redact(c.String())
}

// Transport wraps base (http.DefaultTransport when nil) with the rules
// of CheckRedirect, for clients that follow redirects where the caller
// cannot set CheckRedirect (go-containerregistry's): each redirected
// request is checked, and loses its credentials when it leaves the
// origin. The body of a response that is not a success is cut at
// MaxErrorBytes, any other at MaxResponseBytes.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base}
}

type transport struct{ base http.RoundTripper }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Response != nil && req.Response.Request != nil {
		// A redirect: its origin is the first request of the chain.
		origin, hops := req.Response.Request, 1
		for origin.Response != nil && origin.Response.Request != nil {
			origin, hops = origin.Response.Request, hops+1
		}
		if hops > MaxRedirects {
			return nil, &RedirectError{From: redactURL(origin.URL), To: redactURL(req.URL), Why: fmt.Sprintf("more than %d redirects", MaxRedirects)}
		}
		if err := checkHop(req.Context(), origin.URL, req.URL); err != nil {
			return nil, err
		}
		if !SameOrigin(origin.URL, req.URL) && (req.Header.Get("Authorization") != "" || req.Header.Get("Cookie") != "") {
			req = req.Clone(req.Context())
			StripCredentials(req.Header)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	limit := int64(MaxResponseBytes)
	if resp.StatusCode >= 300 {
		limit = MaxErrorBytes
	}
	resp.Body = &limitedBody{r: io.LimitReader(resp.Body, limit+1), c: resp.Body, limit: limit}
	return resp, nil
}

// ErrTooLarge is a response larger than its limit.
var ErrTooLarge = errors.New("the response is larger than the limit")

// limitedBody fails a read past limit instead of returning EOF, so that a
// cut response is never taken for a whole one.
type limitedBody struct {
	r     io.Reader
	c     io.Closer
	n     int64
	limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		return n, fmt.Errorf("%w (%d bytes)", ErrTooLarge, b.limit)
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.c.Close() }

// Client is an HTTP client for sources: base's transport (and TLS) under
// Transport's rules, CheckRedirect, and Timeout for each request unless
// base sets a shorter one.
func Client(base *http.Client) *http.Client {
	c := &http.Client{Timeout: Timeout}
	if base != nil {
		c.Transport, c.Jar = base.Transport, base.Jar
		if base.Timeout > 0 && base.Timeout < c.Timeout {
			c.Timeout = base.Timeout
		}
	}
	c.Transport = Transport(c.Transport)
	c.CheckRedirect = CheckRedirect
	return c
}

// Status is what is said of a failed HTTP request: its method, URL
// without credentials, and status, never its body (the server's words,
// which may be anything an internal service answered).
func Status(method string, u *url.URL, code int) string {
	return fmt.Sprintf("%s %s: %d %s", method, redactURL(u), code, http.StatusText(code))
}

// WithTimeout is ctx bounded by d (Timeout when 0), unless ctx ends
// sooner: every fetch has a deadline, whoever calls it.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		d = Timeout
	}
	return context.WithTimeout(ctx, d)
}
