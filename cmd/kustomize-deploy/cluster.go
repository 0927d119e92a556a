package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

// clusterFlags are the flags of commands that talk to a cluster: kubectl's
// own, from cli-runtime (--kubeconfig, --context, --as, --request-timeout,
// ...), then ours, among them a managed cluster by name instead of a
// kubeconfig (--eks-cluster, --gke-cluster, --aks-cluster).
type clusterFlags struct {
	kube        *genericclioptions.ConfigFlags
	managed     spec.Cluster
	inventoryNS string
	qps         float64
	burst       int
}

func newClusterFlags() *clusterFlags {
	k := genericclioptions.NewConfigFlags(true)
	// -n is the apply commands' own (the namespace of objects that name
	// none): the inventory stays in --inventory-namespace, whose default
	// is the kubeconfig context's namespace.
	k.Namespace = nil
	// The REST mapper discovers in memory: there is no cache to place.
	k.CacheDir = nil
	return &clusterFlags{kube: k, qps: kube.DefaultQPS, burst: kube.DefaultBurst}
}

func (c *clusterFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	inClusterGroup(cmd, func() {
		c.kube.AddFlags(fs)
		// kubectl's 0 (no limit) would let a frozen API server hang a
		// run: ours is kube.DefaultRequestTimeout.
		if f := fs.Lookup("request-timeout"); f != nil {
			f.DefValue = kube.DefaultRequestTimeout.String()
			_ = f.Value.Set(f.DefValue)
			f.Usage = "How long to wait for the API server to answer each request before giving up (e.g. 1s, 2m; transient failures such as connection refused, 429 and 503 are retried a few times). Waiting for objects to become ready is bounded by --timeout"
		}
		fs.StringVar(&c.inventoryNS, "inventory-namespace", "", "Namespace of the units' inventory Secrets (default: the kubeconfig context's namespace, else default)")
		fs.Float64Var(&c.qps, "kube-api-qps", c.qps, "Requests per second the client may send to the API server")
		fs.IntVar(&c.burst, "kube-api-burst", c.burst, "Requests the client may send at once above --kube-api-qps")
		fs.StringVar(&c.managed.EKS, string(spec.OptEKSCluster), "", "Amazon EKS cluster to connect to instead of a kubeconfig: endpoint and CA from eks:DescribeCluster, tokens from the AWS environment's credentials (no aws CLI)")
		fs.StringVar(&c.managed.EKSRegion, string(spec.OptEKSRegion), "", "Region of --eks-cluster (default: the AWS environment's)")
		fs.StringVar(&c.managed.GKE, string(spec.OptGKECluster), "", "GKE cluster (projects/PROJECT/locations/LOCATION/clusters/NAME) to connect to instead of a kubeconfig: endpoint and CA from clusters.get, tokens from Google's application default credentials ($GOOGLE_APPLICATION_CREDENTIALS, gcloud's file, or a GCE/GKE metadata server) (no gcloud or gke-gcloud-auth-plugin)")
		fs.StringVar(&c.managed.AKS, string(spec.OptAKSCluster), "", "AKS cluster with Entra ID integration (SUBSCRIPTION/RESOURCE_GROUP/NAME or its resource ID) to connect to instead of a kubeconfig: server and CA from listClusterUserCredential, tokens from $AZURE_CLIENT_ID and $AZURE_TENANT_ID with $AZURE_FEDERATED_TOKEN_FILE, $AZURE_CLIENT_SECRET or, in GitHub Actions, the job's OIDC token; else a managed identity ($AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential) or the az CLI's session (no kubelogin)")
	})
	_ = cmd.RegisterFlagCompletionFunc("context", c.completeContexts)
	_ = cmd.MarkFlagFilename("kubeconfig")
	noCompletion(cmd, "inventory-namespace", "kube-api-qps", "kube-api-burst",
		string(spec.OptEKSCluster), string(spec.OptEKSRegion), string(spec.OptGKECluster), string(spec.OptAKSCluster))
}

// clients connects to the cluster the flags name; e.requests, if set,
// counts what the clients send.
func (c *clusterFlags) clients(ctx context.Context, e *env) (*kube.Clients, error) {
	if c.qps <= 0 || c.burst <= 0 {
		return nil, usagef("--kube-api-qps and --kube-api-burst must be positive")
	}
	opts := kube.Options{Config: c.kube, QPS: float32(c.qps), Burst: c.burst, Requests: e.requests}
	if len(c.managed.Set()) > 0 {
		return reached(ctx)(c.managedClients(ctx, e, opts))
	}
	return reached(ctx)(kube.Load(opts))
}

// reached checks that the clients' API server answers, and says in the
// CLI's words what to set when no cluster or no credential plugin was
// found.
func reached(ctx context.Context) func(*kube.Clients, error) (*kube.Clients, error) {
	return func(c *kube.Clients, err error) (*kube.Clients, error) {
		switch {
		case errors.Is(err, kube.ErrNoKubeconfig):
			return nil, fmt.Errorf("%w: pass --kubeconfig (or set $KUBECONFIG), or name a managed cluster with --%s, --%s or --%s",
				err, spec.OptEKSCluster, spec.OptGKECluster, spec.OptAKSCluster)
		case kube.Plugin(err) != "":
			return nil, fmt.Errorf("%w (--%s)", err, spec.ClusterOption(kube.Plugin(err)))
		case err != nil:
			return nil, err
		}
		if err := c.Reach(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}
}

// managedClients connects to the managed cluster the flags name, with
// kubectl's --request-timeout and --as flags applied; tokens are masked.
func (c *clusterFlags) managedClients(ctx context.Context, e *env, opts kube.Options) (*kube.Clients, error) {
	set := c.managed.Set()
	if len(set) > 1 {
		return nil, usagef("--%s and --%s both name the cluster: give one", set[0], set[1])
	}
	for _, f := range []*string{c.kube.KubeConfig, c.kube.Context, c.kube.ClusterName, c.kube.APIServer} {
		if f != nil && *f != "" {
			return nil, usagef("--%s names the cluster: give no kubeconfig, --context, --cluster or --server with it", set[0])
		}
	}
	if err := c.managed.Check(); err != nil {
		return nil, flagErrors(spec.OptionErrors(err))
	}
	timeout, err := requestTimeout(c.kube.Timeout)
	if err != nil {
		return nil, usagef("--request-timeout: %v", err)
	}
	cfg, err := c.managed.Config(ctx, spec.Connect{Getenv: e.getenv, HTTPClient: e.cloud, Mask: func(t string) { e.masker.Add(t) }})
	if err != nil {
		var oe *spec.OptionError
		if errors.As(err, &oe) {
			return nil, fmt.Errorf("connecting to the cluster (--%s): %w", oe.Option, oe.Err)
		}
		return nil, err
	}
	cfg.Timeout = timeout
	if as := c.kube.Impersonate; as != nil && *as != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: *as}
		if c.kube.ImpersonateGroup != nil {
			cfg.Impersonate.Groups = *c.kube.ImpersonateGroup
		}
		if c.kube.ImpersonateUID != nil {
			cfg.Impersonate.UID = *c.kube.ImpersonateUID
		}
	}
	return kube.New(cfg, "default", opts)
}

// requestTimeout reads kubectl's --request-timeout: a duration, or whole
// seconds; "0" (or nothing) is none.
func requestTimeout(v *string) (time.Duration, error) {
	if v == nil || *v == "" || *v == "0" {
		return 0, nil
	}
	if n, err := strconv.Atoi(*v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(*v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 30s, got %q", *v)
	}
	return d, nil
}

// inventoryNamespace is where the units' inventories live.
func (c *clusterFlags) inventoryNamespace(cl *kube.Clients) string {
	return cl.NamespaceOr(c.inventoryNS)
}

// completeUnits offers the units in the inventory namespace.
func (c *clusterFlags) completeUnits(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		cl, err := c.clients(cmd.Context(), e)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		invs, err := inventory.List(cmd.Context(), cl.Client, c.inventoryNamespace(cl))
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(invs))
		for _, inv := range invs {
			names = append(names, inv.Name+"\t"+string(inv.Status.Ready.Reason))
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeContexts offers the kubeconfig's contexts.
func (c *clusterFlags) completeContexts(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	raw, err := c.kube.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, cobra.ShellCompDirectiveNoFileComp
}
