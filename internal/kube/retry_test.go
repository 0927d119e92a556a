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
)

// transport is a reliable transport whose waits are recorded, not slept.
func transport(timeout time.Duration, waits *[]time.Duration) *reliable {
	t := newReliable(http.DefaultTransport, timeout)
	t.sleep = func(ctx context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		return ctx.Err()
	}
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
	}{
		{name: "503 then success, body replayed", status: []int{503, 503, 200}, method: http.MethodPatch, attempts: 3, final: 200},
		{name: "429 without Retry-After", status: []int{429, 200}, method: http.MethodPost, attempts: 2, final: 200},
		{name: "502 for ever: bounded", status: []int{502}, method: http.MethodGet, attempts: retryAttempts, final: 502},
		{name: "Retry-After is client-go's to honour", status: []int{503}, header: "1", method: http.MethodGet, attempts: 1, final: 503},
		{name: "500 to a merge patch is an answer", status: []int{500}, method: http.MethodPatch, content: "application/merge-patch+json", attempts: 1, final: 500},
		{name: "500 to a create is an answer", status: []int{500}, method: http.MethodPost, attempts: 1, final: 500},
		{name: "500 to an update is an answer", status: []int{500}, method: http.MethodPut, attempts: 1, final: 500},
		{name: "500 to a delete is an answer", status: []int{500}, method: http.MethodDelete, attempts: 1, final: 500},
		{name: "500 to a read is retried", status: []int{500, 200}, method: http.MethodGet, attempts: 2, final: 200},
		{name: "500 to a dry-run is retried", status: []int{500, 500, 200}, method: http.MethodPost, query: "?dryRun=All", attempts: 3, final: 200},
		{name: "500 to a server-side apply is retried", status: []int{500, 200}, method: http.MethodPatch, content: "application/apply-patch+yaml", attempts: 2, final: 200},
		{name: "500 for ever: bounded", status: []int{500}, method: http.MethodGet, attempts: retryAttempts, final: 500},
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
			for i := 1; i < len(waits); i++ {
				if waits[i] < waits[i-1] {
					t.Errorf("backoff shrank: %v", waits)
				}
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
	if _, err := send(t, transport(time.Second, &waits), http.MethodPost, refused, "payload"); err == nil || len(waits) != retryAttempts-1 {
		t.Errorf("refused: %v after %d waits", err, len(waits))
	}

	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close() // no answer at all
	}))
	defer srv.Close()
	for method, attempts := range map[string]int32{http.MethodPost: 1, http.MethodPatch: retryAttempts} {
		n.Store(0)
		waits = nil
		if _, err := send(t, transport(time.Second, &waits), method, srv.URL, "payload"); err == nil || n.Load() != attempts {
			t.Errorf("%s on a broken connection: %v after %d attempts, want %d", method, err, n.Load(), attempts)
		}
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
