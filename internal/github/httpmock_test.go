package github

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// call is one request the test server received.
type call struct {
	Method, Path string
	Query        url.Values
	Header       http.Header
	Body         string
}

// stub answers one request; each stub answers exactly once.
type stub struct {
	method, path string
	query        url.Values // every value here must be in the request; others are ignored
	status       int
	header       map[string]string // "{{server}}" is replaced by the server's URL
	body         string
	matched      bool
}

// registry is a GitHub API stand-in on 127.0.0.1 in the manner of cli/cli's
// httpmock: requests are answered by registered stubs in order, anything
// else fails the test, and every stub must have been used by the end.
type registry struct {
	t   *testing.T
	srv *httptest.Server

	mu    sync.Mutex
	stubs []*stub
	calls []call
}

func newRegistry(t *testing.T) *registry {
	t.Helper()
	r := &registry{t: t}
	r.srv = httptest.NewServer(r)
	t.Cleanup(func() {
		r.srv.Close()
		r.verify()
	})
	return r
}

func (r *registry) URL() string { return r.srv.URL }

// register adds a stub answering method path (and query, given as
// "k=v&k=v") with status and a JSON body.
func (r *registry) register(method, path, query string, status int, body string, header ...string) {
	r.t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		r.t.Fatal(err)
	}
	s := &stub{method: method, path: path, query: q, status: status, body: body, header: map[string]string{}}
	for i := 0; i+1 < len(header); i += 2 {
		s.header[header[i]] = header[i+1]
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stubs = append(r.stubs, s)
}

func (r *registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query(), Header: req.Header.Clone(), Body: string(body)})
	for _, s := range r.stubs {
		if s.matched || s.method != req.Method || s.path != req.URL.Path || !subset(s.query, req.URL.Query()) {
			continue
		}
		s.matched = true
		w.Header().Set("Content-Type", "application/json")
		for k, v := range s.header {
			w.Header().Set(k, strings.ReplaceAll(v, "{{server}}", r.srv.URL))
		}
		w.WriteHeader(s.status)
		fmt.Fprint(w, s.body)
		return
	}
	r.t.Errorf("unexpected request %s %s", req.Method, req.URL)
	w.WriteHeader(http.StatusNotImplemented)
	fmt.Fprint(w, `{"message":"no stub"}`)
}

func subset(want, got url.Values) bool {
	for k, vs := range want {
		if strings.Join(vs, ",") != strings.Join(got[k], ",") {
			return false
		}
	}
	return true
}

func (r *registry) verify() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.stubs {
		if !s.matched {
			r.t.Errorf("expected request %s %s?%s was not made", s.method, s.path, s.query.Encode())
		}
	}
}

// Calls returns the requests received so far.
func (r *registry) Calls() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}
