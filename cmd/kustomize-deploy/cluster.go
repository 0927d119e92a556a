package main

import (
	"sort"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// clusterFlags are the flags of commands that talk to a cluster: kubectl's
// own, from cli-runtime (--kubeconfig, --context, --as, --request-timeout,
// ...), then ours.
type clusterFlags struct {
	kube        *genericclioptions.ConfigFlags
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
	})
	_ = cmd.RegisterFlagCompletionFunc("context", c.completeContexts)
	_ = cmd.MarkFlagFilename("kubeconfig")
	noCompletion(cmd, "inventory-namespace", "kube-api-qps", "kube-api-burst")
}

// clients connects to the cluster the flags name; e.requests, if set,
// counts what the clients send.
func (c *clusterFlags) clients(e *env) (*kube.Clients, error) {
	if c.qps <= 0 || c.burst <= 0 {
		return nil, usagef("--kube-api-qps and --kube-api-burst must be positive")
	}
	return kube.Load(kube.Options{Config: c.kube, QPS: float32(c.qps), Burst: c.burst, Requests: e.requests})
}

// inventoryNamespace is where the units' inventories live.
func (c *clusterFlags) inventoryNamespace(cl *kube.Clients) string {
	return cl.NamespaceOr(c.inventoryNS)
}

// completeUnits offers the units in the inventory namespace.
func (c *clusterFlags) completeUnits(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		cl, err := c.clients(e)
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
