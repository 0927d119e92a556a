package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

func TestIsInternal(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "169.254.169.254": true, "fe80::1": true,
		"10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true, "fd00::1": true,
		"0.0.0.0": true, "::": true, "::ffff:127.0.0.1": true,
		"203.0.113.7": false, "8.8.8.8": false, "2001:4860:4860::8888": false,
	} {
		if got := IsInternal(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: %v, want %v", addr, got, want)
		}
	}
}

// Redirects: a public host may not send the runner to an internal
// address; credentials are dropped on any change of scheme, host or
// port; the chain is bounded.
func TestCheckRedirect(t *testing.T) {
	was := lookup
	lookup = func(_ context.Context, _, host string) ([]netip.Addr, error) {
		switch host {
		case "charts.example.com", "cdn.example.net":
			return []netip.Addr{netip.MustParseAddr("203.0.113.7")}, nil
		case "metadata.internal":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		}
		return nil, errors.New("no such host")
	}
	t.Cleanup(func() { lookup = was })
	for _, tc := range []struct {
		name, from, to string
		hops           int
		err            string
		keepAuth       bool
	}{
		{name: "same origin", from: "https://charts.example.com/index.yaml", to: "https://charts.example.com/charts/web.tgz", keepAuth: true},
		{name: "default port spelled out", from: "https://charts.example.com/a", to: "https://charts.example.com:443/b", keepAuth: true},
		{name: "another port", from: "https://charts.example.com/a", to: "https://charts.example.com:8443/b"},
		{name: "https to http", from: "https://charts.example.com/a", to: "http://charts.example.com/b"},
		{name: "a subdomain", from: "https://example.com/a", to: "https://charts.example.com/b"},
		{name: "another public host", from: "https://charts.example.com/a", to: "https://cdn.example.net/b"},
		{name: "public to loopback", from: "https://charts.example.com/a", to: "http://127.0.0.1:8080/b", err: "to an internal address"},
		{name: "public to link-local", from: "https://charts.example.com/a", to: "http://169.254.169.254/latest/meta-data/", err: "to an internal address"},
		{name: "public to a name of an internal address", from: "https://charts.example.com/a", to: "http://metadata.internal/", err: "to an internal address"},
		{name: "public to localhost", from: "https://charts.example.com/a", to: "http://localhost:9000/", err: "to an internal address"},
		{name: "public to a private network", from: "https://charts.example.com/a", to: "http://10.0.0.5/", err: "to an internal address"},
		{name: "internal to internal", from: "http://127.0.0.1:8080/a", to: "http://10.0.0.5/b"},
		{name: "too many", from: "https://charts.example.com/a", to: "https://charts.example.com/b", hops: MaxRedirects, err: "more than 10 redirects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, _ := http.NewRequest(http.MethodGet, tc.from, nil)
			via := []*http.Request{first}
			for len(via) < max(tc.hops, 1) {
				via = append(via, first)
			}
			req, _ := http.NewRequest(http.MethodGet, tc.to, nil)
			req.Header.Set("Authorization", "Basic c2VjcmV0")
			err := CheckRedirect(req, via)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := req.Header.Get("Authorization") != ""; got != tc.keepAuth {
				t.Errorf("credentials kept: %v, want %v", got, tc.keepAuth)
			}
		})
	}
}

// Through Transport (a client whose CheckRedirect cannot be set): a
// redirect to an internal address is refused before it is sent, the
// credentials do not follow to another port, and an error body is cut.
func TestTransport(t *testing.T) {
	var internalHits atomic.Int64
	var gotAuth atomic.Value
	gotAuth.Store("")
	other := onInternal(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		if r.URL.Path == "/big-error" {
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(strings.Repeat("x", MaxErrorBytes*2)))
			return
		}
		internalHits.Add(1)
	}))
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer origin.Close()
	c := &http.Client{Transport: Transport(nil)}

	req, _ := http.NewRequest(http.MethodGet, origin.URL+"/v2/", nil)
	req.SetBasicAuth("u", "secret")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a := gotAuth.Load().(string); a != "" {
		t.Errorf("the credentials followed the redirect to another port: %q", a)
	}

	resp, err = c.Get(origin.URL + "/big-error")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("an error body of %d bytes read whole: %v", MaxErrorBytes*2, err)
	}

	// The origin taken for public: the other server, on loopback, is
	// internal.
	u, _ := url.Parse(origin.URL)
	public := netip.MustParseAddr(u.Hostname())
	was := IsInternal
	IsInternal = func(a netip.Addr) bool { return a != public && was(a) }
	defer func() { IsInternal = was }()
	internalHits.Store(0)
	_, err = c.Get(origin.URL + "/latest/meta-data/")
	var re *RedirectError
	if !errors.As(err, &re) {
		t.Fatalf("error %v, want a refused redirect", err)
	}
	if n := internalHits.Load(); n != 0 {
		t.Errorf("the internal address was sent %d requests", n)
	}
}

// onInternal serves h on 127.0.0.2, a loopback address apart from the
// test servers' 127.0.0.1.
func onInternal(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2: %v", err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}
