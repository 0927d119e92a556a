package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/kustomize-deploy/kustomize-deploy/internal/eks"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// connect reaches the cluster the inputs name: an EKS cluster by name
// (eks-cluster: endpoint, CA and tokens from the ambient AWS credentials,
// no kubeconfig, no aws CLI), else the kubeconfig input or $KUBECONFIG,
// else kubectl's defaults (in-cluster, ~/.kube/config). In diff mode with
// neither eks-cluster nor a kubeconfig it returns no clients: the diff is
// offline. cleanup removes what connect wrote.
func (r *runner) connect(ctx context.Context) (*kube.Clients, func(), error) {
	noop := func() {}
	if r.in.EKSCluster != "" {
		if r.in.Kubeconfig != "" {
			return nil, noop, errors.New("inputs 'eks-cluster' and 'kubeconfig' are both set: the cluster is one or the other")
		}
		cfg, err := eks.Config(ctx, eks.Options{Cluster: r.in.EKSCluster, Region: r.in.EKSRegion})
		if err != nil {
			return nil, noop, fmt.Errorf("connecting to the cluster (input 'eks-cluster'): %w", err)
		}
		clients, err := kube.New(cfg, "default", kube.Options{QPS: r.in.QPS, Burst: r.in.Burst})
		if err != nil {
			return nil, noop, fmt.Errorf("connecting to the cluster (input 'eks-cluster'): %w", err)
		}
		fmt.Fprintf(r.log, "EKS cluster %s: %s\n", r.in.EKSCluster, cfg.Host)
		return clients, noop, nil
	}
	kc, cleanup, err := r.kubeconfig()
	if err != nil {
		return nil, noop, err
	}
	if r.mode == result.ModeDiff && kc == "" {
		return nil, cleanup, nil
	}
	clients, err := kube.Load(kube.Options{Config: kubeFlags(kc, r.in.Context), QPS: r.in.QPS, Burst: r.in.Burst})
	if err != nil {
		cleanup()
		return nil, noop, fmt.Errorf("connecting to the cluster (input 'kubeconfig'): %w", err)
	}
	return clients, cleanup, nil
}
