package testcluster

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Main starts one cluster for a test package, stores it in *c, runs the
// tests and stops the cluster. A cluster that cannot start fails the whole
// package loudly (exit 1); it never skips. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster)) }
func Main(m *testing.M, c **Cluster) int { return MainWith(m, c, Options{}) }

// MainWith is Main with options for the cluster (Log defaults to stderr).
// A test binary that runs no test (see runsNoTest) starts no cluster and
// leaves *c nil.
func MainWith(m *testing.M, c **Cluster, opts Options) int {
	flag.Parse()
	if runsNoTest() {
		return m.Run()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A signal (Ctrl-C, CI cancellation) stops the cluster, also while it is
	// still starting, before the process ends.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	started := make(chan *Cluster, 1)
	go func() {
		sig, ok := <-signals
		if !ok {
			return
		}
		cancel()
		select {
		case cl := <-started:
			cl.Stop()
		case <-time.After(stopGrace):
		}
		fmt.Fprintf(os.Stderr, "testcluster: stopped on %v\n", sig)
		os.Exit(130)
	}()

	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	cluster, err := Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: the test cluster did not start: %v\n", err)
		return 1
	}
	started <- cluster
	defer cluster.Stop()
	*c = cluster
	return m.Run()
}

// runsNoTest reports whether the test binary only lists its tests
// (go test -list), is a fuzz worker (which runs nothing but the fuzz
// function), or fuzzes with -run '^$' as make fuzz does: a cluster would
// cost each of those processes seconds and two cores, for nothing.
func runsNoTest() bool {
	value := func(name string) string {
		if f := flag.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	return value("test.list") != "" || value("test.fuzzworker") == "true" ||
		value("test.fuzz") != "" && value("test.run") == "^$"
}

// Client returns an admin clientset.
func (c *Cluster) Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return client
}

// ConfigAs returns a copy of the admin configuration that impersonates user
// (with groups), so RBAC decides what it may do.
func (c *Cluster) ConfigAs(user string, groups ...string) *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return cfg
}

// ConfigAsServiceAccount impersonates namespace/name the way the API server
// authenticates a service account token.
func (c *Cluster) ConfigAsServiceAccount(namespace, name string) *rest.Config {
	return c.ConfigAs("system:serviceaccount:"+namespace+":"+name,
		"system:serviceaccounts", "system:serviceaccounts:"+namespace, "system:authenticated")
}

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a fresh namespace for t, named after the test, and
// deletes it when the test ends.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	prefix := strings.Trim(nonName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(prefix) > 40 {
		prefix = strings.Trim(prefix[:40], "-")
	}
	client := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: prefix + "-",
			Labels:       map[string]string{"testcluster.kustomize-deploy.dev/test": "true"},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace for %s: %v", t.Name(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}
