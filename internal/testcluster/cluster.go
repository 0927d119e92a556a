package testcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	serviceClusterIPRange = "10.96.0.0/16"
	kubernetesServiceIP   = "10.96.0.1"
	podCIDR               = "10.244.0.0/16"
	adminUser             = "testcluster-admin"
	stopGrace             = 10 * time.Second
)

// Options configure Start. The zero value is usable.
type Options struct {
	// Dir holds data, certificates, logs and the kubeconfig. Empty means a new
	// temporary directory that Stop removes; a given Dir is kept.
	Dir string
	// BinDir holds the binaries. Empty means EnsureBinaries, building them if
	// they are not cached.
	BinDir string
	// Nodes is the number of kwok fake nodes; 0 means 2.
	Nodes int
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// TokenWebhook, if set, makes the API server ask a webhook about
	// bearer tokens it does not know (TokenReview v1), as EKS asks
	// aws-iam-authenticator. The webhook must be up before a request
	// carries such a token, not before Start.
	TokenWebhook *Webhook
}

// Webhook is an HTTPS endpoint the API server calls.
type Webhook struct {
	// URL answers POSTs of authentication.k8s.io/v1 TokenReviews.
	URL string
	// CA is the PEM certificate authority of URL's serving certificate.
	CA []byte
}

// Cluster is a running control plane.
type Cluster struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for the admin user.
	Kubeconfig string
	// Dir holds the cluster's data, certificates and logs.
	Dir string

	opts        Options
	ownDir      bool
	pki         *pki
	apiArgs     []string
	apiPort     int
	componentKC string
	// kubeletPort is where kwok serves the kubelet's API (container
	// logs) for every fake node.
	kubeletPort int

	mu    sync.Mutex
	procs []*process // in start order; apiserver is replaced on restart
}

// Start builds the binaries if needed and starts etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok with opts.Nodes fake nodes.
// It returns once the API server is ready, the default service account exists
// and every node is Ready; only then is the kubeconfig written. On error
// everything started so far is stopped again.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Nodes <= 0 {
		opts.Nodes = 2
	}
	if opts.BinDir == "" {
		if opts.BinDir, err = EnsureBinaries(ctx, opts.Log); err != nil {
			return nil, err
		}
	}
	c = &Cluster{opts: opts}
	if err := c.makeDir(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.pki, err = writePKI(filepath.Join(c.Dir, "pki")); err != nil {
		return nil, fmt.Errorf("writing certificates: %w", err)
	}
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	tokenFile := filepath.Join(c.Dir, "pki", "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(token+","+adminUser+","+adminUser+",\"system:masters\"\n"), 0o600); err != nil {
		return nil, err
	}

	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	c.kubeletPort = ports[3]
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	c.apiPort = ports[2]
	c.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(c.apiPort),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.pki.caPEM},
		QPS:             100,
		Burst:           200,
	}
	c.componentKC = filepath.Join(c.Dir, "pki", "components.kubeconfig")
	if err := writeKubeconfig(c.componentKC, c.Config); err != nil {
		return nil, err
	}

	start := time.Now()
	if err := c.startEtcd(ctx, etcdURL, peerURL); err != nil {
		return nil, err
	}
	c.apiArgs = c.apiServerArgs(etcdURL, tokenFile)
	if w := opts.TokenWebhook; w != nil {
		kc := filepath.Join(c.Dir, "pki", "token-webhook.kubeconfig")
		if err := writeKubeconfig(kc, &rest.Config{Host: w.URL, TLSClientConfig: rest.TLSClientConfig{CAData: w.CA}}); err != nil {
			return nil, err
		}
		c.apiArgs = append(c.apiArgs,
			"--authentication-token-webhook-config-file", kc,
			"--authentication-token-webhook-version", "v1",
			// Each test's tokens are new; a cached verdict would only
			// hide a webhook that stopped answering.
			"--authentication-token-webhook-cache-ttl", "0s",
		)
	}
	if err := c.StartAPIServer(ctx); err != nil {
		return nil, err
	}
	if err := c.startControllers(); err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	if err := createFakeNodes(ctx, client, opts.Nodes); err != nil {
		return nil, err
	}
	if err := c.waitUsable(ctx, client, opts.Nodes); err != nil {
		return nil, err
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, c.Config); err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Log, "testcluster: cluster ready in %s (API server %s)\n", time.Since(start).Round(100*time.Millisecond), c.Config.Host)
	return c, nil
}

func (c *Cluster) makeDir() error {
	if c.opts.Dir != "" {
		c.Dir = c.opts.Dir
		if err := os.MkdirAll(c.Dir, 0o700); err != nil {
			return err
		}
		// A kubeconfig left by an earlier run must not be mistaken for this one.
		_ = os.Remove(filepath.Join(c.Dir, "kubeconfig"))
		for _, sub := range []string{"etcd", "pki", "logs"} {
			if err := os.RemoveAll(filepath.Join(c.Dir, sub)); err != nil {
				return err
			}
		}
	} else {
		sweepStaleDirs()
		dir, err := os.MkdirTemp("", tempDirPrefix)
		if err != nil {
			return err
		}
		c.Dir, c.ownDir = dir, true
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(c.Dir, "logs"), 0o700)
}

func (c *Cluster) bin(name string) string { return filepath.Join(c.opts.BinDir, name) }

func (c *Cluster) logPath(name string) string { return filepath.Join(c.Dir, "logs", name+".log") }

func (c *Cluster) start(name string, args ...string) (*process, error) {
	p, err := startProcess(name, c.bin(name), args, c.logPath(name))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p, nil
}

func (c *Cluster) startEtcd(ctx context.Context, clientURL, peerURL string) error {
	p, err := c.start(binEtcd,
		"--name", "testcluster",
		"--data-dir", filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls", clientURL,
		"--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL,
		"--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "testcluster="+peerURL,
		"--unsafe-no-fsync",
		"--log-level", "warn",
	)
	if err != nil {
		return err
	}
	return waitHTTP(ctx, p, clientURL+"/health", nil, 60*time.Second)
}

func (c *Cluster) apiServerArgs(etcdURL, tokenFile string) []string {
	return []string{
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(c.apiPort),
		"--cert-dir", filepath.Join(c.Dir, "pki", "apiserver"),
		"--tls-cert-file", c.pki.ServingCert,
		"--tls-private-key-file", c.pki.ServingKey,
		"--client-ca-file", c.pki.CACert,
		"--token-auth-file", tokenFile,
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", c.pki.SAPub,
		"--service-account-signing-key-file", c.pki.SAKey,
		"--service-cluster-ip-range", serviceClusterIPRange,
		"--endpoint-reconciler-type", "none",
		"--allow-privileged",
		// The fake nodes' kubelet is kwok, at 127.0.0.1 (their
		// InternalIP; their names resolve nowhere), serving with the
		// API server's certificate: pods/log goes through the API
		// server's node proxy as it does on a real cluster.
		"--kubelet-preferred-address-types", "InternalIP",
		"--kubelet-certificate-authority", c.pki.CACert,
		"--profiling=false",
		"--v", "1",
	}
}

// StartAPIServer (re)starts the API server with the arguments of the first
// start and waits until it is ready. Tests use it with StopAPIServer to
// simulate an API server outage.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	p, err := c.start(binAPIServer, c.apiArgs...)
	if err != nil {
		return err
	}
	return waitHTTP(ctx, p, c.Config.Host+"/readyz", c.Config, 2*time.Minute)
}

// KillAPIServer kills the API server at once (SIGKILL), as a crash
// would; StartAPIServer brings it back.
func (c *Cluster) KillAPIServer() { c.stopAPIServer(0) }

// StopAPIServer stops the API server; every other component keeps running.
func (c *Cluster) StopAPIServer() { c.stopAPIServer(stopGrace) }

func (c *Cluster) stopAPIServer(grace time.Duration) {
	c.mu.Lock()
	var keep []*process
	var stop []*process
	for _, p := range c.procs {
		if p.name == binAPIServer {
			stop = append(stop, p)
		} else {
			keep = append(keep, p)
		}
	}
	c.procs = keep
	c.mu.Unlock()
	for _, p := range stop {
		p.stop(grace)
	}
}

// FreezeAPIServer stops the API server's processes with SIGSTOP: its port
// still accepts connections, and nothing answers, as a frozen or
// overloaded server does. ThawAPIServer resumes them.
func (c *Cluster) FreezeAPIServer() { c.signalAPIServer(syscall.SIGSTOP) }

// ThawAPIServer resumes an API server FreezeAPIServer stopped.
func (c *Cluster) ThawAPIServer() { c.signalAPIServer(syscall.SIGCONT) }

func (c *Cluster) signalAPIServer(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if p.name == binAPIServer {
			killGroup(p.cmd.Process.Pid, sig)
		}
	}
}

func (c *Cluster) startControllers() error {
	kc := c.componentKC
	if _, err := c.start(binControllerManager,
		"--kubeconfig", kc,
		"--controllers", "*,-nodeipam",
		"--leader-elect=false",
		"--secure-port", "0",
		"--service-account-private-key-file", c.pki.SAKey,
		"--root-ca-file", c.pki.CACert,
		"--cluster-signing-cert-file", c.pki.CACert,
		"--cluster-signing-key-file", c.pki.CAKey,
		"--use-service-account-credentials",
		"--profiling=false",
	); err != nil {
		return err
	}
	if _, err := c.start(binScheduler,
		"--kubeconfig", kc,
		"--authentication-kubeconfig", kc,
		"--authorization-kubeconfig", kc,
		"--leader-elect=false",
		"--secure-port", "0",
		"--profiling=false",
	); err != nil {
		return err
	}
	if err := c.createKwokCRDs(); err != nil {
		return err
	}
	config, err := os.ReadFile(c.bin(kwokStagesFile))
	if err != nil {
		return err
	}
	if config, err = kwokConfig(config); err != nil {
		return err
	}
	kwokFile := filepath.Join(c.Dir, "pki", "kwok.yaml")
	if err := os.WriteFile(kwokFile, config, 0o600); err != nil {
		return err
	}
	_, err = c.start(binKwok,
		"--kubeconfig", kc,
		"--config", kwokFile,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector", fakeNodeAnnotation+"=fake",
		"--cidr", podCIDR,
		"--node-ip", "127.0.0.1",
		"--node-port", strconv.Itoa(c.kubeletPort),
		"--server-address", "127.0.0.1:"+strconv.Itoa(c.kubeletPort),
		"--tls-cert-file", c.pki.ServingCert,
		"--tls-private-key-file", c.pki.ServingKey,
		"--enable-crds", "ClusterLogs",
	)
	return err
}

// Stop ends every process (SIGTERM, then SIGKILL after a grace period) in
// reverse start order, then removes the directory if Start created it, or
// everything but the logs if the caller chose it. It is safe to call more
// than once.
func (c *Cluster) Stop() {
	c.mu.Lock()
	procs := c.procs
	c.procs = nil
	c.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].stop(stopGrace)
	}
	if c.ownDir {
		_ = os.RemoveAll(c.Dir)
		return
	}
	// A directory the caller chose keeps its logs for reading afterwards; the
	// rest, the kubeconfig with its admin token first, goes.
	for _, name := range []string{"kubeconfig", "etcd", "pki"} {
		_ = os.RemoveAll(filepath.Join(c.Dir, name))
	}
}

// Exited reports the first component that has ended on its own, if any.
func (c *Cluster) Exited() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if ok, err := p.exited(); ok {
			return fmt.Errorf("%w; last lines of %s:\n%s", err, p.logPath, p.logTail(20))
		}
	}
	return nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// pids lists the process IDs of the running components.
func (c *Cluster) pids() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]int{}
	for _, p := range c.procs {
		m[p.name] = p.cmd.Process.Pid
	}
	return m
}
