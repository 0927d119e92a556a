// Package sourcetest serves hostile source servers for tests, on
// loopback only: an "internal" server on 127.0.0.2 that counts what it
// is sent, a server that never answers, and a switch that takes one
// loopback address for a public one (every test server listens on
// loopback, which the sources' redirect rule calls internal).
package sourcetest

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"html"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
)

// Internal serves on 127.0.0.2 (loopback: an internal address, apart
// from the test servers' 127.0.0.1) and counts the requests it gets; it
// answers what a cloud's metadata service would.
func Internal(t testing.TB) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("sourcetest: listening on 127.0.0.2: %v", err)
	}
	hits := &atomic.Int64{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"AccessKeyId": "ASIAINTERNAL", "SecretAccessKey": "instance-role-secret"}`))
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, hits
}

// Public makes the host of rawURL (an address) count as public for the
// rest of the test. The test cannot be parallel.
func Public(t testing.TB, rawURL string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	public, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		t.Fatalf("sourcetest: %s is not an address", u.Hostname())
	}
	was := fetch.IsInternal
	fetch.IsInternal = func(a netip.Addr) bool { return a != public && was(a) }
	t.Cleanup(func() { fetch.IsInternal = was })
}

// Redirecting serves a redirect of every request to the same path on
// target.
func Redirecting(t testing.TB, target string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Silent accepts requests and never answers them (until the test ends).
func Silent(t testing.TB) string {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv.URL
}

// Failing answers every request with code and body.
func Failing(t testing.TB, code int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, body, code)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// S3 serves bucket holding objects (key → content) as S3's REST API does
// for path-style requests (ListObjectsV2, GetObject), on 127.0.0.1. With
// accessKey set, a request not signed with it (SigV4's Credential) is
// refused with AccessDenied. It returns host:port.
func S3(t testing.TB, bucket string, objects map[string]string, accessKey string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if accessKey != "" && !strings.Contains(r.Header.Get("Authorization"), "Credential="+accessKey+"/") {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>INTERNAL-DETAIL-not-for-comments</Message></Error>`))
			return
		}
		name, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if name != bucket {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`<Error><Code>NoSuchBucket</Code></Error>`))
			return
		}
		if key == "" && r.URL.Query().Get("list-type") == "2" {
			prefix := r.URL.Query().Get("prefix")
			var b strings.Builder
			b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>` + bucket + `</Name><IsTruncated>false</IsTruncated>`)
			for _, k := range slices.Sorted(maps.Keys(objects)) {
				if !strings.HasPrefix(k, prefix) {
					continue
				}
				sum := md5.Sum([]byte(objects[k]))
				fmt.Fprintf(&b, `<Contents><Key>%s</Key><ETag>"%s"</ETag><Size>%d</Size></Contents>`, html.EscapeString(k), hex.EncodeToString(sum[:]), len(objects[k]))
			}
			b.WriteString(`</ListBucketResult>`)
			w.Header().Set("Content-Type", "application/xml")
			_, _ = w.Write([]byte(b.String()))
			return
		}
		body, ok := objects[key]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`<Error><Code>NoSuchKey</Code></Error>`))
			return
		}
		sum := md5.Sum([]byte(body))
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
