package kube

import (
	"net/http"
	"sort"
	"strings"
	"sync"
)

// RequestCounter counts the HTTP requests clients send to the API server, by
// method; benchmarks read it (kustomize-deploy writes it out when
// KUSTOMIZE_DEPLOY_COUNT_REQUESTS names a file). Dry-run requests are counted
// apart, as "PATCH dryRun" and so on. The zero value is ready to use.
type RequestCounter struct {
	mu       sync.Mutex
	byMethod map[string]int
}

// RequestCount is a snapshot of a RequestCounter.
type RequestCount struct {
	Total    int            `json:"total"`
	ByMethod map[string]int `json:"byMethod"`
}

// Wrap returns rt counting every request through c; it fits
// rest.Config.Wrap.
func (c *RequestCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return countingTransport{c: c, next: rt}
}

// Count returns the requests counted so far.
func (c *RequestCounter) Count() RequestCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := RequestCount{ByMethod: map[string]int{}}
	keys := make([]string, 0, len(c.byMethod))
	for k := range c.byMethod {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.ByMethod[k] = c.byMethod[k]
		out.Total += c.byMethod[k]
	}
	return out
}

// Wrote says whether a request that may have written anything was sent:
// any but a read (GET, HEAD) or a dry-run. A lock taken is one.
func (c *RequestCounter) Wrote() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, n := range c.byMethod {
		switch key {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if n > 0 && !strings.HasSuffix(key, " dryRun") {
				return true
			}
		}
	}
	return false
}

func (c *RequestCounter) add(r *http.Request) {
	key := r.Method
	if r.URL != nil && r.URL.Query().Has("dryRun") {
		key += " dryRun"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byMethod == nil {
		c.byMethod = map[string]int{}
	}
	c.byMethod[key]++
}

type countingTransport struct {
	c    *RequestCounter
	next http.RoundTripper
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.c.add(r)
	return t.next.RoundTrip(r)
}
