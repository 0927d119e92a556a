package spec

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/kustomize-deploy/kustomize-deploy/internal/azure"
	"github.com/kustomize-deploy/kustomize-deploy/internal/eks"
	"github.com/kustomize-deploy/kustomize-deploy/internal/gcp"
)

// Cluster is a managed cluster reached by name instead of a kubeconfig:
// its endpoint and CA from the cloud's API, bearer tokens from the cloud
// credentials the job's official auth step left in the environment. No
// CLI or exec plugin is run. At most one of EKS, GKE and AKS is set.
type Cluster struct {
	// EKS is an Amazon EKS cluster's name, in EKSRegion (default: the
	// AWS environment's).
	EKS, EKSRegion string
	// GKE is projects/PROJECT/locations/LOCATION/clusters/NAME.
	GKE string
	// AKS is SUBSCRIPTION/RESOURCE_GROUP/NAME or the cluster's ARM
	// resource ID.
	AKS string
}

// The options of a Cluster.
const (
	OptEKSCluster Option = "eks-cluster"
	OptEKSRegion  Option = "eks-region"
	OptGKECluster Option = "gke-cluster"
	OptAKSCluster Option = "aks-cluster"
)

// ClusterOption is the option naming a managed cluster of kind: EKS, GKE
// or AKS (as kube.Plugin names them); "" for another.
func ClusterOption(kind string) Option {
	switch kind {
	case "EKS":
		return OptEKSCluster
	case "GKE":
		return OptGKECluster
	case "AKS":
		return OptAKSCluster
	}
	return ""
}

// Set returns the options naming a cluster, in the order above; more than
// one is a mistake the front end names in its own words (it may conflict
// with a kubeconfig too).
func (c Cluster) Set() []Option {
	var set []Option
	for _, o := range []struct {
		opt Option
		v   string
	}{{OptEKSCluster, c.EKS}, {OptGKECluster, c.GKE}, {OptAKSCluster, c.AKS}} {
		if strings.TrimSpace(o.v) != "" {
			set = append(set, o.opt)
		}
	}
	return set
}

// Name is the cluster's short name (the EKS name, the GKE or AKS
// cluster's last path segment), for commit status contexts and comment
// markers; "" when none is set.
func (c Cluster) Name() string {
	switch {
	case c.EKS != "":
		return strings.TrimSpace(c.EKS)
	case c.GKE != "":
		return c.GKE[strings.LastIndex(c.GKE, "/")+1:]
	case c.AKS != "":
		if _, name, err := azure.ClusterID(c.AKS); err == nil {
			return name
		}
	}
	return ""
}

// Check says what is wrong with the names, each an *OptionError, joined.
func (c Cluster) Check() error {
	var errs []error
	if c.GKE != "" {
		if err := gcp.CheckClusterName(strings.TrimSpace(c.GKE)); err != nil {
			errs = append(errs, &OptionError{Option: OptGKECluster, Err: err})
		}
	}
	if c.AKS != "" {
		if _, _, err := azure.ClusterID(c.AKS); err != nil {
			errs = append(errs, &OptionError{Option: OptAKSCluster, Err: err})
		}
	}
	return errors.Join(errs...)
}

// Connect says how to reach the cloud.
type Connect struct {
	// Getenv reads the Google and Azure credentials' variables (the AWS
	// SDK reads the process's environment itself).
	Getenv func(string) string
	// HTTPClient reaches Google's and Azure's token and cluster APIs; nil
	// means the default.
	HTTPClient *http.Client
	// Mask is called with every token before it is used (the Action
	// registers it with ::add-mask::); nil is none.
	Mask func(token string)
}

// Config connects to the cluster set: a client configuration with its
// endpoint, CA and a token source. Its error is an *OptionError naming
// the option. ctx bounds later token refreshes too.
func (c Cluster) Config(ctx context.Context, how Connect) (*rest.Config, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	var cfg *rest.Config
	var err error
	var opt Option
	switch set := c.Set(); {
	case len(set) == 0:
		return nil, errors.New("no managed cluster named")
	case len(set) > 1:
		return nil, fmt.Errorf("%s are all set: name one cluster", strings.Join(optionNames(set), ", "))
	case c.EKS != "":
		opt = OptEKSCluster
		cfg, err = eks.Config(ctx, eks.Options{Cluster: strings.TrimSpace(c.EKS), Region: strings.TrimSpace(c.EKSRegion)})
	case c.GKE != "":
		opt = OptGKECluster
		cfg, err = gcp.GKEConfig(ctx, gcp.GKEOptions{
			Options: gcp.Options{Getenv: how.Getenv, HTTPClient: how.HTTPClient},
			Cluster: strings.TrimSpace(c.GKE), Mask: how.Mask,
		})
	default:
		opt = OptAKSCluster
		cfg, err = azure.AKSConfig(ctx, azure.AKSOptions{
			Options: azure.Options{Getenv: how.Getenv, HTTPClient: how.HTTPClient},
			Cluster: strings.TrimSpace(c.AKS), Mask: how.Mask,
		})
	}
	if err != nil {
		return nil, &OptionError{Option: opt, Err: err}
	}
	return cfg, nil
}

// String names the cluster for logs: "GKE cluster projects/…/clusters/prod".
func (c Cluster) String() string {
	switch {
	case c.EKS != "":
		return "EKS cluster " + strings.TrimSpace(c.EKS)
	case c.GKE != "":
		return "GKE cluster " + strings.TrimSpace(c.GKE)
	case c.AKS != "":
		return "AKS cluster " + strings.TrimSpace(c.AKS)
	}
	return "no managed cluster"
}

func optionNames(opts []Option) []string {
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = string(o)
	}
	return out
}
