package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
)

// --gke-cluster and --aks-cluster connect without a kubeconfig: the
// cloud's cluster API gives this package's API server and CA, and the
// cloud's token goes to it. The API server here knows no cloud (the
// Action's tests give theirs a token webhook), so it refuses the token:
// the command says so, and prints no token.
func TestManagedClusterFlags(t *testing.T) {
	g := kmstest.NewGCP(t)
	const gke = "projects/shop/locations/europe-west1/clusters/laptop"
	g.AddCluster(gke, strings.TrimPrefix(cluster.Config.Host, "https://"), cluster.Config.CAData)
	creds := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(creds, g.ServiceAccountKey("deployer@shop.iam.gserviceaccount.com"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := kmstest.NewAzure(t)
	a.AddApp("laptop-app", "laptop-client-secret~0123")
	a.AddCluster("sub", "shop", "laptop", cluster.Config.Host, cluster.Config.CAData, "laptop-app")

	c := newCLI(t)
	c.cloud = kmstest.Client(g, a)
	c.env = map[string]string{
		"GOOGLE_APPLICATION_CREDENTIALS": creds,
		"AZURE_TENANT_ID":                a.Tenant, "AZURE_CLIENT_ID": "laptop-app", "AZURE_CLIENT_SECRET": "laptop-client-secret~0123",
	}
	for flag, name := range map[string]string{"--gke-cluster": gke, "--aks-cluster": "sub/shop/laptop"} {
		o := c.runAsIs("status", flag, name, "--inventory-namespace", c.ns)
		if o.code == exitOK || !strings.Contains(o.stderr, "the server has asked for the client to provide credentials") {
			t.Errorf("%s: exit %d\n%s\n%s", flag, o.code, o.stdout, o.stderr)
		}
		for _, tok := range append(g.Tokens(), a.Tokens()...) {
			if strings.Contains(o.stdout+o.stderr, tok) {
				t.Errorf("%s: a token shows in the output", flag)
			}
		}
		if strings.Contains(o.stdout+o.stderr, "laptop-client-secret") {
			t.Errorf("%s: the client secret shows in the output", flag)
		}
	}
	if n := g.Count("GKE.GetCluster"); n != 1 {
		t.Errorf("%d clusters.get, want 1", n)
	}
	if n := a.Count("ARM.ListClusterUserCredential"); n != 1 {
		t.Errorf("%d listClusterUserCredential, want 1", n)
	}
}

// Mistakes in naming a managed cluster are usage errors naming the flag.
func TestManagedClusterFlagErrors(t *testing.T) {
	c := newCLI(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--gke-cluster", "prod"}, `--gke-cluster: "prod": want projects/PROJECT/locations/LOCATION/clusters/NAME`},
		{[]string{"--aks-cluster", "rg/prod"}, `--aks-cluster: "rg/prod": want SUBSCRIPTION/RESOURCE_GROUP/NAME`},
		{[]string{"--eks-cluster", "a", "--gke-cluster", "projects/p/locations/l/clusters/c"}, "--eks-cluster and --gke-cluster both name the cluster"},
		{[]string{"--aks-cluster", "s/rg/c", "--kubeconfig", cluster.Kubeconfig}, "--aks-cluster names the cluster: give no kubeconfig"},
		{[]string{"--aks-cluster", "s/rg/c"}, "connecting to the cluster (--aks-cluster): AKS cluster s/rg/c: no Azure credentials"},
	}
	for _, tt := range tests {
		o := c.runAsIs(append([]string{"status", "--inventory-namespace", c.ns}, tt.args...)...)
		if o.code == exitOK || !strings.Contains(o.stderr, tt.want) {
			t.Errorf("%v: exit %d, want %q\n%s", tt.args, o.code, tt.want, o.stderr)
		}
	}
}
