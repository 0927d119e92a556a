package kube

import (
	"maps"
	"net/http"
	"strings"
	"sync"
)

// RequestCounter counts the HTTP requests clients send to the API server, by
// method and by method and resource; benchmarks read it (kustomize-deploy
// writes it out when KUSTOMIZE_DEPLOY_COUNT_REQUESTS names a file). Dry-run
// requests are counted apart, as "PATCH dryRun" and so on. The zero value is
// ready to use.
type RequestCounter struct {
	mu         sync.Mutex
	byMethod   map[string]int
	byResource map[string]int
}

// RequestCount is a snapshot of a RequestCounter.
type RequestCount struct {
	Total    int            `json:"total"`
	ByMethod map[string]int `json:"byMethod"`
	// ByResource counts by method and what the request was about:
	// "PATCH configmaps", "GET deployments.apps", "GET leases.coordination.k8s.io",
	// "GET secrets/status"; "GET discovery" for the API's discovery
	// documents, "GET version" for /version.
	ByResource map[string]int `json:"byResource,omitempty"`
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
	out := RequestCount{ByMethod: maps.Clone(c.byMethod), ByResource: maps.Clone(c.byResource)}
	if out.ByMethod == nil {
		out.ByMethod = map[string]int{}
	}
	for _, n := range c.byMethod {
		out.Total += n
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
	if c.byResource == nil {
		c.byResource = map[string]int{}
	}
	if r.URL != nil {
		c.byResource[key+" "+resourceOf(r.URL.Path)]++
	}
}

// resourceOf names what an API path is about: its resource (with the
// group, as kubectl names it, and the subresource), "discovery" or
// "version"; "other" for what is none of them.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	switch {
	case len(parts) == 1 && parts[0] == "version":
		return "version"
	case parts[0] == "api" && len(parts) >= 2:
		parts = parts[2:]
	case parts[0] == "apis" && len(parts) >= 3:
		group, parts = parts[1], parts[3:]
	case parts[0] == "api" || parts[0] == "apis":
		return "discovery"
	default:
		return "other"
	}
	if len(parts) == 0 {
		return "discovery"
	}
	// namespaces/NS/RESOURCE..., unless it is the Namespace itself
	// (namespaces/NS, namespaces/NS/status or /finalize).
	if parts[0] == "namespaces" && len(parts) >= 3 && parts[2] != "status" && parts[2] != "finalize" {
		parts = parts[2:]
	}
	name := parts[0]
	if group != "" {
		name += "." + group
	}
	if len(parts) >= 3 {
		name += "/" + parts[2]
	}
	return name
}

type countingTransport struct {
	c    *RequestCounter
	next http.RoundTripper
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.c.add(r)
	return t.next.RoundTrip(r)
}
