package main

import (
	"encoding/pem"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// fault is what the proxy does with one request instead of passing it on.
type fault string

const (
	faultConflict    fault = "409"       // Conflict, as an optimistic write that lost
	faultThrottled   fault = "429"       // TooManyRequests without Retry-After
	faultRetryAfter  fault = "429+after" // TooManyRequests with Retry-After: 1
	faultServerError fault = "500"       // InternalError
	faultUnavailable fault = "503"       // ServiceUnavailable
	faultSlow        fault = "slow"      // answered, late (under the request timeout)
	faultTooSlow     fault = "too-slow"  // answered after the request timeout
	faultInjected          = "injected by the test proxy"
)

// retryable faults are the ones a run must get through.
var retryable = []fault{faultThrottled, faultRetryAfter, faultUnavailable, faultSlow}

// reported faults are the ones a run may fail on, saying so.
var reported = []fault{faultConflict, faultServerError, faultTooSlow}

// faultProxy is a TLS reverse proxy in front of the test cluster's API
// server, with the admin's credentials, that answers a share of the
// requests with a fault instead.
type faultProxy struct {
	t       *testing.T
	server  *httptest.Server
	timeout time.Duration // the runs' --request-timeout

	mu       sync.Mutex
	rng      *rand.Rand
	faults   []fault
	rate     int // in percent of requests
	injected map[fault]int
	// always, when set, answers every request to this path with its
	// fault, and counts them in sent.
	always struct {
		path  string
		fault fault
		sent  int
	}
}

func newFaultProxy(t *testing.T, cfg *rest.Config, timeout time.Duration) *faultProxy {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{t: t, timeout: timeout, injected: map[fault]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1
	rp.ErrorLog = nil
	p.server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.inject(w, r) {
			return
		}
		rp.ServeHTTP(w, r)
	}))
	p.server.EnableHTTP2 = true
	p.server.StartTLS()
	t.Cleanup(p.server.Close)
	return p
}

// arm makes rate percent of the requests fail with one of faults, drawn
// from a generator seeded with seed.
func (p *faultProxy) arm(seed uint64, rate int, faults []fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rng, p.rate, p.faults = rand.New(rand.NewPCG(seed, 1)), rate, faults
}

// draw picks the fault for a request, if any. A Conflict answers only a
// write, as an API server's does: a read never conflicts.
func (p *faultProxy) draw(method, path string) (fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.always.path != "" && path == p.always.path {
		p.always.sent++
		p.injected[p.always.fault]++
		return p.always.fault, true
	}
	if len(p.faults) == 0 || p.rng.IntN(100) >= p.rate {
		return "", false
	}
	f := p.faults[p.rng.IntN(len(p.faults))]
	if f == faultConflict && (method == http.MethodGet || method == http.MethodHead) {
		return "", false
	}
	p.injected[f]++
	return f, true
}

func (p *faultProxy) inject(w http.ResponseWriter, r *http.Request) bool {
	f, ok := p.draw(r.Method, r.URL.Path)
	if !ok {
		return false
	}
	status := func(code int, reason string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"reason":%q,"code":%d}`,
			fmt.Sprintf("%s %s: %s", r.Method, r.URL.Path, faultInjected), reason, code)
	}
	switch f {
	case faultConflict:
		status(http.StatusConflict, "Conflict")
	case faultThrottled:
		status(http.StatusTooManyRequests, "TooManyRequests")
	case faultRetryAfter:
		w.Header().Set("Retry-After", "1")
		status(http.StatusTooManyRequests, "TooManyRequests")
	case faultServerError:
		status(http.StatusInternalServerError, "InternalError")
	case faultUnavailable:
		status(http.StatusServiceUnavailable, "ServiceUnavailable")
	case faultSlow, faultTooSlow:
		delay := p.timeout / 2
		if f == faultTooSlow {
			delay = p.timeout + time.Second
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done(): // the client gave up
			return true
		}
		return false // then answered for real
	}
	return true
}

// answerAlways answers every request to path with f from now on.
func (p *faultProxy) answerAlways(path string, f fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.always.path, p.always.fault, p.always.sent = path, f, 0
}

// sentAlways is how many requests to the path of answerAlways came.
func (p *faultProxy) sentAlways() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.always.sent
}

func (p *faultProxy) counts() map[fault]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[fault]int{}
	for f, n := range p.injected {
		out[f] = n
	}
	return out
}

// kubeconfig points at the proxy, trusting its certificate; the proxy
// adds the credentials.
func (p *faultProxy) kubeconfig(t *testing.T) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.server.Certificate().Raw})
	caFile := filepath.Join(t.TempDir(), "proxy-ca.crt")
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	writeFile(t, path, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: anonymous, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: anonymous}}]
current-context: proxy
`, p.server.URL, caFile))
	return path
}

// Conflicts, throttling, server errors and slow answers from the API
// server, injected by a proxy into seeded applies of changing Git: a run
// through faults that are safe to retry (429 with and without
// Retry-After, 503, a slow answer) succeeds; a run through any fault
// ends, succeeds or fails saying what failed, never orphans an object or
// deletes a foreign one, and the next run converges.
func TestFlakyAPIServerConverges(t *testing.T) {
	const unit = "flaky"
	const timeout = 2 * time.Second
	c := newCLI(t)
	kc, err := kube.New(cluster.Config, c.ns, kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	f := newFaultEnv(t, cluster.Client(t), kc, c.ns, unit)
	proxy := newFaultProxy(t, cluster.Config, timeout)
	git := newGitState(t, 60)
	args := func(kubeconfig string) []string {
		return []string{"apply", "--kubeconfig", kubeconfig, "--inventory-namespace", c.ns, "-n", c.ns, "--name", unit,
			"--path", git.dir, "--request-timeout", timeout.String(), "--timeout", "30s", "--lock-timeout", "20s"}
	}
	through := args(proxy.kubeconfig(t))
	direct := args(cluster.Kubeconfig)

	iterations := faultIterations(t, 10)
	seed := faultSeed(t)
	var failed, leftLocks int
	for i := range iterations {
		s := seed + uint64(i)
		rng := rand.New(rand.NewPCG(s, 0))

		// Retryable faults only: the run gets through them.
		git.shuffle(t, rng)
		proxy.arm(s, 15, retryable)
		o, finished := runBounded(t, t.Context(), 2*time.Minute, &watchedBuffer{}, through...)
		proxy.arm(0, 0, nil)
		if !finished {
			t.Fatalf("seed %d: the run hung through retryable faults:\n%s", s, o.stderr)
		}
		if o.code != exitOK {
			t.Fatalf("seed %d: a run through retryable faults (%v) failed: exit %d\n%s%s", s, retryable, o.code, o.stdout, o.stderr)
		}
		f.converged(fmt.Sprintf("seed %d, through retryable faults", s), git.names())

		// Any fault: the run may fail, saying why, and leaves nothing behind.
		git.shuffle(t, rng)
		proxy.arm(s, 8, append(append([]fault(nil), retryable...), reported...))
		o, finished = runBounded(t, t.Context(), 2*time.Minute, &watchedBuffer{}, through...)
		proxy.arm(0, 0, nil)
		if !finished {
			t.Fatalf("seed %d: the run hung:\n%s", s, o.stderr)
		}
		if o.code != exitOK {
			failed++
			out := o.stdout + o.stderr
			t.Logf("seed %d: %s", s, faultLine(out))
			if !strings.Contains(out, faultInjected) && !strings.Contains(out, "did not answer within") {
				t.Errorf("seed %d: the run failed (exit %d) without naming the fault:\n%s", s, o.code, out)
			}
		}
		f.check(fmt.Sprintf("seed %d, through any fault", s))
		if f.releaseLeftLock() {
			leftLocks++
		}
		o, _ = runBounded(t, t.Context(), 2*time.Minute, &watchedBuffer{}, direct...)
		if o.code != exitOK {
			t.Fatalf("seed %d: the run after the faults did not converge: exit %d\n%s%s", s, o.code, o.stdout, o.stderr)
		}
		f.converged(fmt.Sprintf("seed %d, converged", s), git.names())
		if t.Failed() {
			t.Fatalf("replay with KUSTOMIZE_DEPLOY_FAULT_SEED=%d", s)
		}
	}
	counts := proxy.counts()
	for _, fl := range append(append([]fault(nil), retryable...), reported...) {
		if counts[fl] == 0 {
			t.Errorf("no %s was injected in %d iterations: the test proves nothing about it", fl, iterations)
		}
	}
	t.Logf("%d iterations (seeds %d..%d), faults injected %v: %d runs through any fault failed (each naming it), %d left a lock; all converged, no orphan, nothing foreign deleted",
		iterations, seed, seed+uint64(iterations)-1, counts, failed, leftLocks)
}

// One request that the API server throttles for ever (429 with
// Retry-After, as priority and fairness answers) is sent at most
// kube.MaxAttempts times, then the run fails saying so: client-go's own
// retries (up to 10 more, each honouring Retry-After) do not multiply
// the transport's.
func TestThrottledRequestIsSentAFewTimesOnly(t *testing.T) {
	const unit = "throttled"
	c := newCLI(t)
	proxy := newFaultProxy(t, cluster.Config, 10*time.Second)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n")
	proxy.answerAlways("/api/v1/namespaces/"+c.ns+"/secrets/"+inventory.SecretName(unit), faultRetryAfter)
	o := c.runAsIs("apply", "--kubeconfig", proxy.kubeconfig(t), "--inventory-namespace", c.ns, "-n", c.ns,
		"--name", unit, "--path", dir, "--timeout", "30s")
	if o.code != exitFail {
		t.Fatalf("exit %d through a throttled inventory read, want %d\n%s%s", o.code, exitFail, o.stdout, o.stderr)
	}
	contains(t, "the output", o.stdout+o.stderr, "reading inventory Secret "+c.ns+"/"+inventory.SecretName(unit), faultInjected)
	if sent := proxy.sentAlways(); sent != kube.MaxAttempts {
		t.Errorf("the inventory read was sent %d times, want %d (kube.MaxAttempts)", sent, kube.MaxAttempts)
	}
}

// faultLine is the first line of out naming a fault.
func faultLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, faultInjected) || strings.Contains(l, "did not answer within") {
			return l
		}
	}
	return lastLine(out)
}
