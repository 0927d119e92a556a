package kube

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// transport is a reliable transport whose waits are recorded, not slept:
// its clock moves by each wait. It has its own connection pool: a parallel
// test's httptest.Server.Close closes http.DefaultTransport's idle
// connections, which breaks a request another test has in flight.
func transport(timeout time.Duration, waits *[]time.Duration) *reliable {
	t := newReliable(http.DefaultTransport.(*http.Transport).Clone(), timeout)
	start := time.Now()
	var slept time.Duration
	t.sleep = func(ctx context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		slept += d
		return ctx.Err()
	}
	t.now = func() time.Time { return start.Add(slept) }
	return t
}

func send(t *testing.T, rt http.RoundTripper, method, url, body string) (*http.Response, error) {
	t.Helper()
	return sendTyped(t, rt, method, url, body, "")
}

func sendTyped(t *testing.T, rt http.RoundTripper, method, url, body, contentType string) (*http.Response, error) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return rt.RoundTrip(req)
}

func TestReliableRetriesWhatTheServerDidNotDo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   []int // answers in turn; the last repeats
		header   string
		method   string
		query    string // appended to the URL
		content  string // Content-Type
		attempts int
		final    int
		// minWait is the least every wait must be.
		minWait time.Duration
	}{
		{name: "503 then success, body replayed", status: []int{503, 503, 200}, method: http.MethodPatch, attempts: 3, final: 200},
		{name: "429 without Retry-After", status: []int{429, 200}, method: http.MethodPost, attempts: 2, final: 200},
		{name: "502 for ever: bounded", status: []int{502}, method: http.MethodGet, attempts: MaxAttempts, final: 502},
		{name: "Retry-After is waited for", status: []int{503, 429, 200}, header: "2", method: http.MethodGet, attempts: 3, final: 200, minWait: 2 * time.Second},
		{name: "Retry-After for ever: bounded", status: []int{429}, header: "1", method: http.MethodGet, attempts: MaxAttempts, final: 429, minWait: time.Second},
		{name: "Retry-After past the bound: answered at once", status: []int{429}, header: "31", method: http.MethodGet, attempts: 1, final: 429},
		{name: "500 to a merge patch is an answer", status: []int{500}, method: http.MethodPatch, content: "application/merge-patch+json", attempts: 1, final: 500},
		{name: "500 to a create is an answer", status: []int{500}, method: http.MethodPost, attempts: 1, final: 500},
		{name: "500 to an update is an answer", status: []int{500}, method: http.MethodPut, attempts: 1, final: 500},
		{name: "500 to a delete is an answer", status: []int{500}, method: http.MethodDelete, attempts: 1, final: 500},
		{name: "500 to a read is retried", status: []int{500, 200}, method: http.MethodGet, attempts: 2, final: 200},
		{name: "500 to a dry-run is retried", status: []int{500, 500, 200}, method: http.MethodPost, query: "?dryRun=All", attempts: 3, final: 200},
		{name: "500 to a server-side apply is retried", status: []int{500, 200}, method: http.MethodPatch, content: "application/apply-patch+yaml", attempts: 2, final: 200},
		{name: "500 for ever: bounded", status: []int{500}, method: http.MethodGet, attempts: MaxAttempts, final: 500},
		{name: "409 is an answer", status: []int{409}, method: http.MethodPut, attempts: 1, final: 409},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				body, _ := io.ReadAll(r.Body)
				if r.Method != http.MethodGet && string(body) != "payload" {
					t.Errorf("attempt %d got body %q", i+1, body)
				}
				if tc.header != "" {
					w.Header().Set("Retry-After", tc.header)
				}
				w.WriteHeader(tc.status[min(i, len(tc.status)-1)])
			}))
			defer srv.Close()
			var waits []time.Duration
			body := "payload"
			if tc.method == http.MethodGet {
				body = ""
			}
			resp, err := sendTyped(t, transport(time.Second, &waits), tc.method, srv.URL+tc.query, body, tc.content)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if int(n.Load()) != tc.attempts || resp.StatusCode != tc.final || len(waits) != tc.attempts-1 {
				t.Errorf("%d attempts ending %d after waits %v; want %d ending %d", n.Load(), resp.StatusCode, waits, tc.attempts, tc.final)
			}
			for i := range waits {
				if i > 0 && waits[i] < waits[i-1] && tc.minWait == 0 {
					t.Errorf("backoff shrank: %v", waits)
				}
				if waits[i] < tc.minWait {
					t.Errorf("waited %v, under the %v asked for", waits[i], tc.minWait)
				}
			}
			// Retried here or not, an answer asks client-go for no more.
			if ra := resp.Header.Get("Retry-After"); ra != "" && (resp.StatusCode == 429 || resp.StatusCode >= 500) {
				t.Errorf("the answer still carries Retry-After: %s", ra)
			}
		})
	}
}

// A refused connection is retried (the API server restarting); a broken
// one only for methods that may be sent twice.
func TestReliableConnectionFailures(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()
	var waits []time.Duration
	if _, err := send(t, transport(time.Second, &waits), http.MethodPost, refused, "payload"); err == nil || len(waits) != MaxAttempts-1 {
		t.Errorf("refused: %v after %d waits", err, len(waits))
	}

	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close() // no answer at all
	}))
	defer srv.Close()
	for method, attempts := range map[string]int32{http.MethodPost: 1, http.MethodPatch: MaxAttempts} {
		n.Store(0)
		waits = nil
		if _, err := send(t, transport(time.Second, &waits), method, srv.URL, "payload"); err == nil || n.Load() != attempts {
			t.Errorf("%s on a broken connection: %v after %d attempts, want %d", method, err, n.Load(), attempts)
		}
	}
}

// Under client-go, which retries too (a GET whose connection broke, any
// answer with Retry-After, up to 10 times each), one request is still
// sent at most MaxAttempts times: reliable is the one retry layer.
func TestReliableIsTheOneRetryLayerUnderClientGo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   string // in the error
	}{
		{name: "429 with Retry-After", answer: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}, want: "too many requests"},
		{name: "503 with Retry-After", answer: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		}, want: "unable to handle the request"},
		{name: "connection reset", answer: func(w http.ResponseWriter) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			if tcp, ok := conn.(*net.TCPConn); ok {
				_ = tcp.SetLinger(0) // a reset, not a close
			}
			conn.Close()
		}, want: "the connection was reset before the API server answered (5 attempt(s))"},
		{name: "connection closed", answer: func(w http.ResponseWriter) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, want: "before the API server answered (5 attempt(s))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				tc.answer(w)
			}))
			defer srv.Close()
			var waits []time.Duration
			cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{NegotiatedSerializer: scheme.Codecs.WithoutConversion()}}
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
				r := transport(time.Second, &waits)
				r.next = rt
				return r
			})
			rc, err := rest.UnversionedRESTClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = rc.Get().AbsPath("/api/v1/namespaces/x/configmaps/y").Do(t.Context()).Error()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
			if got := int(n.Load()); got != MaxAttempts {
				t.Errorf("the request was sent %d times, want %d", got, MaxAttempts)
			}
		})
	}
}

// A server that accepts and never answers ends each request after the
// timeout with an error naming it; it is not retried.
func TestReliableTimeoutNamesTheRequest(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var waits []time.Duration
	_, err := send(t, transport(100*time.Millisecond, &waits), http.MethodGet, srv.URL+"/api/v1/namespaces/x/configmaps", "")
	var te *TimeoutError
	if !errors.As(err, &te) || te.URL != srv.URL+"/api/v1/namespaces/x/configmaps" || te.After != 100*time.Millisecond {
		t.Fatalf("error %v", err)
	}
	// The fact only: a hint naming a flag is each front end's to add.
	if msg := te.Error(); msg != "the API server did not answer within 100ms" {
		t.Errorf("message %q", msg)
	}
	if n.Load() != 1 || len(waits) != 0 {
		t.Errorf("a timeout was retried: %d attempts", n.Load())
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Error("the error is not a net.Error timeout")
	}
}

// The deadline covers the body: an answer whose body stalls ends too.
func TestReliableTimeoutCoversTheBody(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		_, _ = w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var waits []time.Duration
	resp, err := send(t, transport(100*time.Millisecond, &waits), http.MethodGet, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Errorf("reading a stalled body: %v", err)
	}
}
