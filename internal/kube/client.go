// Package kube connects to a cluster: it loads a kubeconfig the way kubectl
// does, sets deliberate rate limits, and builds the clients the pipeline
// steps share.
package kube

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Options say which cluster to talk to and how.
type Options struct {
	// Config finds the cluster and the identity the way kubectl does: its
	// flags (cli-runtime's ConfigFlags: --kubeconfig, --context, --as,
	// --request-timeout, ...). Nil means kubectl's defaults: $KUBECONFIG,
	// ~/.kube/config, then the in-cluster configuration.
	Config genericclioptions.RESTClientGetter
	// QPS and Burst limit requests to the API server. client-go's defaults
	// (5/10) throttle any real deployment, so ours are higher.
	QPS   float32
	Burst int
	// Requests, if set, counts every request the clients (and clients made
	// from their Config) send.
	Requests *RequestCounter
}

// Default rate limits: sized for a unit of several thousand objects, so
// that the client's limiter is not what bounds a run (make bench measured
// 100/200 costing ~40 s per 1,000 objects, and 500/1,000 adding 7 s to a
// first deploy of 5,000). What a run sends is bounded anyway by its 8
// requests in flight, and the API server's priority and fairness still
// protects the server. kapp uses 1,000/1,000.
const (
	DefaultQPS   = 1000
	DefaultBurst = 2000
)

// DefaultOptions returns options with the default rate limits.
func DefaultOptions() Options {
	return Options{QPS: DefaultQPS, Burst: DefaultBurst}
}

// Clients are what the pipeline needs to read and write a cluster.
type Clients struct {
	// Config is the caller's identity; Impersonate derives other identities.
	Config *rest.Config
	// Client is a controller-runtime client (fluxcd/pkg/ssa works with it).
	Client client.Client
	// Mapper maps kinds to resources; it re-discovers when it meets a kind
	// it does not know, such as one whose CRD was applied a moment ago.
	Mapper meta.RESTMapper
	// Namespace is the kubeconfig context's namespace, or "default".
	Namespace string
}

// NamespaceOr is ns, or the kubeconfig context's namespace when ns is
// empty: where an option that names no namespace (the inventory's, the
// objects') means the context's, as kubectl's -n does.
func (c *Clients) NamespaceOr(ns string) string {
	if ns != "" {
		return ns
	}
	return c.Namespace
}

// Load reads the kubeconfig and connects. The clients' Namespace is the
// namespace Config gives (the kubeconfig context's), else "default". With
// nothing to connect to it returns ErrNoKubeconfig, and a
// *MissingPluginError when the context's credentials come from an
// executable that is not installed.
func Load(opts Options) (*Clients, error) {
	getter := opts.Config
	if getter == nil {
		getter = genericclioptions.NewConfigFlags(true)
	}
	raw, err := getter.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	context, server := "", ""
	if f, ok := getter.(*genericclioptions.ConfigFlags); ok {
		context, server = deref(f.Context), deref(f.APIServer)
	}
	if err := checkConfig(raw, context, server, inCluster(), lookPath); err != nil {
		return nil, err
	}
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	ns, _, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	return New(cfg, ns, opts)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// New builds clients for cfg; namespace is the default namespace to use.
func New(cfg *rest.Config, namespace string, opts Options) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	if opts.QPS > 0 {
		cfg.QPS = opts.QPS
	}
	if opts.Burst > 0 {
		cfg.Burst = opts.Burst
	}
	if opts.Requests != nil {
		cfg.Wrap(opts.Requests.Wrap)
	}
	// Each request is bounded (the kubeconfig flags' --request-timeout,
	// else DefaultRequestTimeout) and transient failures are retried, by
	// our transport: it names the request that timed out.
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	cfg.Timeout = 0
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return newReliable(rt, timeout) })
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("discovering the API of %s: %w", cfg.Host, err)
	}
	c, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return &Clients{Config: cfg, Client: c, Mapper: mapper, Namespace: namespace}, nil
}

// Impersonate returns clients acting as the service account namespace/name,
// so the API server's RBAC decides what the deployment may touch. They share
// the REST mapper with c.
func (c *Clients) Impersonate(namespace, name string) (*Clients, error) {
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + name,
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: c.Mapper})
	if err != nil {
		return nil, err
	}
	return &Clients{Config: cfg, Client: cl, Mapper: c.Mapper, Namespace: c.Namespace}, nil
}
