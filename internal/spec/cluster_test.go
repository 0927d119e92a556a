package spec

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClusterNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		c       Cluster
		set     []Option
		short   string
		wantErr string
	}{
		{name: "none"},
		{name: "EKS", c: Cluster{EKS: "prod", EKSRegion: "eu-west-1"}, set: []Option{OptEKSCluster}, short: "prod"},
		{name: "GKE", c: Cluster{GKE: "projects/shop/locations/europe-west1/clusters/prod"}, set: []Option{OptGKECluster}, short: "prod"},
		{name: "AKS short", c: Cluster{AKS: "sub/rg/prod"}, set: []Option{OptAKSCluster}, short: "prod"},
		{name: "AKS ID", c: Cluster{AKS: "subscriptions/sub/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/prod"}, set: []Option{OptAKSCluster}, short: "prod"},
		{name: "two", c: Cluster{EKS: "a", AKS: "s/rg/b"}, set: []Option{OptEKSCluster, OptAKSCluster}, short: "a"},
		{name: "bad GKE", c: Cluster{GKE: "prod"}, set: []Option{OptGKECluster}, short: "prod",
			wantErr: `gke-cluster: "prod": want projects/PROJECT/locations/LOCATION/clusters/NAME`},
		{name: "bad AKS", c: Cluster{AKS: "rg/prod"}, set: []Option{OptAKSCluster},
			wantErr: `aks-cluster: "rg/prod": want SUBSCRIPTION/RESOURCE_GROUP/NAME`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.set, tt.c.Set()); diff != "" {
				t.Errorf("Set (-want +got):\n%s", diff)
			}
			if got := tt.c.Name(); got != tt.short {
				t.Errorf("Name %q, want %q", got, tt.short)
			}
			err := tt.c.Check()
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Check = %v, want %q", err, tt.wantErr)
			}
			if err != nil && len(OptionErrors(err)) != 1 {
				t.Errorf("%d option errors", len(OptionErrors(err)))
			}
		})
	}
}

// Connecting fails with the option named, before any request, when the
// name is bad or two clusters are named.
func TestClusterConfigRefusesBadNames(t *testing.T) {
	t.Parallel()
	_, err := Cluster{GKE: "prod"}.Config(context.Background(), Connect{})
	if oe := OptionErrors(err); len(oe) != 1 || oe[0].Option != OptGKECluster {
		t.Errorf("err = %v", err)
	}
	_, err = Cluster{GKE: "projects/p/locations/l/clusters/c", AKS: "s/rg/c"}.Config(context.Background(), Connect{})
	if err == nil || !strings.Contains(err.Error(), "gke-cluster, aks-cluster are all set") {
		t.Errorf("err = %v", err)
	}
	// No credentials: the error names the option and what to set.
	_, err = Cluster{AKS: "s/rg/c"}.Config(context.Background(), Connect{Getenv: func(string) string { return "" }})
	if oe := OptionErrors(err); len(oe) != 1 || oe[0].Option != OptAKSCluster || !strings.Contains(err.Error(), "no Azure credentials") {
		t.Errorf("err = %v", err)
	}
}
