package action

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/azure"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kmstest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/sopstest"
)

// The GKE and AKS tests run the action as a workflow would after the
// clouds' official auth steps, against in-process doubles of GitHub's ID
// token endpoint and the cloud (token and cluster APIs, KMS), and deploy
// to this package's API server, which asks the token webhook about the
// bearer token: the token a run sends is one the cloud issued.

// cloudRun is a push run of deploy/app (l.env) with the cloud doubles
// reachable and vars in the step's environment.
func (l *leakRepo) cloudRun(head, ns string, vars map[string]string, doubles ...kmstest.Double) *runEnv {
	e := l.env("push", head, "", ns, false)
	for k, v := range vars {
		e.vars[k] = v
	}
	e.cloud = kmstest.Client(doubles...)
	return e
}

// scanTokens adds the access tokens the cloud issued to the scan: those
// the API server accepted were masked by the last run (checked), the
// others (for the key service) need not be. It returns how many were
// accepted.
func (l *leakRepo) scanTokens(mode, what string, issued []string) int {
	l.t.Helper()
	accepted, refused := webhook.tokens()
	if len(refused) > 0 {
		l.t.Errorf("%s: the API server refused tokens: %v", mode, refused)
	}
	sent := map[string]bool{}
	var names []string
	for i, tok := range accepted {
		if !sent[tok] {
			sent[tok] = true
			name := what + " token sent to the API server " + strconv.Itoa(i+1)
			l.scan.Secret(name, tok)
			names = append(names, name)
		}
	}
	for i, tok := range issued {
		if !sent[tok] {
			l.scan.Unmasked(what+" token "+strconv.Itoa(i+1), tok)
		}
	}
	l.scan.CheckRegistered(l.t, mode, l.lastStdout, names...)
	return len(sent)
}

// GKE without a kubeconfig and SOPS with GCP KMS, as a workflow after
// google-github-actions/auth (direct Workload Identity Federation) has
// them: GOOGLE_APPLICATION_CREDENTIALS names the file it wrote (the OIDC
// token fetched from the job's ID token endpoint with the request token,
// exchanged at STS). clusters.get gives the endpoint and CA, the
// federated principal's token reaches the API server, and the Secret is
// decrypted with Cloud KMS. Nothing of the request token, the OIDC
// token, any access token or the value shows anywhere; a request token
// GitHub refuses fails the run naming gke-cluster.
func TestLeakScanActionGKE(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	g := kmstest.NewGCP(t)
	gh := kmstest.NewGitHubOIDC(t)
	const (
		gkeCluster = "projects/shop/locations/europe-west1/clusters/prod-gke"
		provider   = "projects/1/locations/global/workloadIdentityPools/github/providers/github"
		principal  = "principal://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/github/subject/repo:acme/deployments:ref:refs/heads/main"
		admin      = "serviceAccount:admin@shop.iam.gserviceaccount.com"
	)
	oidcAudience := "https://iam.googleapis.com/" + provider
	g.AllowFederation("//iam.googleapis.com/"+provider, gh.TokenFor(oidcAudience), principal)
	g.AddCluster(gkeCluster, strings.TrimPrefix(cluster.Config.Host, "https://"), cluster.Config.CAData)
	key := g.CreateKey("deploy", "sops")
	g.AllowKey(key, principal)
	g.AllowKey(key, admin)
	webhook.expectGKE(t, g)
	bindClusterAdmin(t, cloudGroup)

	dir := t.TempDir()
	creds := filepath.Join(dir, "gha-creds-0123456789abcdef.json")
	if err := os.WriteFile(creds, kmstest.ExternalAccountFromGitHub("//iam.googleapis.com/"+provider, gh, oidcAudience, ""), 0o600); err != nil {
		t.Fatal(err)
	}
	l.scan.Secret("GitHub OIDC request token", gh.RequestToken)
	l.scan.Unmasked("GitHub OIDC token", gh.TokenFor(oidcAudience))
	l.scan.Secret("SOPS value", leakSpecial)
	l.write("deploy/app/kustomization.yaml", "resources: [creds.enc.yaml]\n")
	l.encryptFor("deploy/app/creds.enc.yaml", "creds", leakSpecial,
		sopstest.Services{GoogleToken: g.IssueToken(admin), HTTPClient: kmstest.Client(g)}, sopstest.KeyGroup{GCPKMS: []string{key}})
	head := l.commit("a Secret for GCP KMS")

	vars := gh.Env()
	vars["GOOGLE_APPLICATION_CREDENTIALS"] = creds
	unit := l.cloudRun(head, ns, vars, g, gh).input("gke-cluster", gkeCluster)
	mode := "push (gke-cluster, GCP KMS)"
	res := l.run(mode, unit, "GitHub OIDC request token", "SOPS value")
	if res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	if n := l.scanTokens(mode, "Google access", g.Tokens()); n == 0 {
		t.Error("no token reached the API server")
	}
	s, err := cluster.Client(t).CoreV1().Secrets(ns).Get(t.Context(), "creds", metav1.GetOptions{})
	if err != nil || string(s.Data["value"]) != leakSpecial {
		t.Fatalf("the Secret: %v", err)
	}
	if n := g.Count("GKE.GetCluster"); n != 1 {
		t.Errorf("%d clusters.get, want 1", n)
	}
	if st := l.gh.lastStatus(); st == nil || st["context"] != "kustomize-deploy/prod-gke/app" {
		t.Errorf("status %v", st)
	}

	// A request token GitHub refuses: no token, no cluster.
	l.encryptFor("deploy/app/creds.enc.yaml", "creds", leakData,
		sopstest.Services{GoogleToken: g.IssueToken(admin), HTTPClient: kmstest.Client(g)}, sopstest.KeyGroup{GCPKMS: []string{key}})
	head = l.commit("another value")
	const wrong = "wrong-actions-id-token-request-token-0123"
	bad := filepath.Join(dir, "gha-creds-refused.json")
	data := strings.ReplaceAll(string(kmstest.ExternalAccountFromGitHub("//iam.googleapis.com/"+provider, gh, oidcAudience, "")), gh.RequestToken, wrong)
	if err := os.WriteFile(bad, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	l.scan.Unmasked("a refused request token, in the credentials file only", wrong)
	l.scan.Unmasked("SOPS value, never decrypted", leakData)
	vars = gh.Env()
	vars["GOOGLE_APPLICATION_CREDENTIALS"] = bad
	refused := l.cloudRun(head, ns, vars, g, gh).input("gke-cluster", gkeCluster)
	res = l.run("push (refused request token)", refused)
	if res.code != exitFail || !strings.Contains(res.stdout, "connecting to the cluster (input 'gke-cluster'): GKE cluster "+gkeCluster+": no token from GOOGLE_APPLICATION_CREDENTIALS (external_account)") {
		t.Fatalf("push with a refused request token: exit %d\n%s", res.code, res.stdout)
	}
}

// AKS without a kubeconfig and SOPS with Azure Key Vault, as a workflow
// with azure/login's OIDC settings has them: AZURE_CLIENT_ID and
// AZURE_TENANT_ID, and the job's ID token endpoint (id-token: write),
// whose OIDC token Entra ID takes as the application's federated
// credential. listClusterUserCredential gives the server and CA, a token
// for AKS's server application reaches the API server, and the Secret is
// decrypted with Key Vault. Nothing of the request token, the OIDC
// token, any access token or the value shows anywhere; a client secret
// Entra ID refuses fails the run naming aks-cluster, unquoted.
func TestLeakScanActionAKS(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	a := kmstest.NewAzure(t)
	gh := kmstest.NewGitHubOIDC(t)
	const (
		subscription = "00000000-1111-2222-3333-444444444444"
		app          = "a1b2c3d4-0000-4000-8000-deployer0001"
		secretApp    = "a1b2c3d4-0000-4000-8000-deployer0002"
		admin        = "a1b2c3d4-0000-4000-8000-admin0000001"
	)
	a.AddApp(app, "")
	a.AllowFederated(app, gh.TokenFor(azure.GitHubAudience))
	a.AddApp(secretApp, "the-right-client-secret~0123")
	a.AddApp(admin, "")
	a.AddCluster(subscription, "shop", "prod-aks", cluster.Config.Host, cluster.Config.CAData, app, secretApp)
	vault, version := a.CreateKey("deployvault", "sops")
	a.AllowKey("deployvault", "sops", app)
	a.AllowKey("deployvault", "sops", admin)
	webhook.expectAKS(t, a)
	bindClusterAdmin(t, cloudGroup)

	l.scan.Secret("GitHub OIDC request token", gh.RequestToken)
	l.scan.Unmasked("GitHub OIDC token", gh.TokenFor(azure.GitHubAudience))
	l.scan.Secret("SOPS value", leakSpecial)
	l.write("deploy/app/kustomization.yaml", "resources: [creds.enc.yaml]\n")
	keyURL := vault + "/keys/sops/" + version
	l.encryptFor("deploy/app/creds.enc.yaml", "creds", leakSpecial,
		sopstest.Services{AzureToken: a.IssueToken(admin, kmstest.AzureVaultAudience), HTTPClient: kmstest.Client(a)}, sopstest.KeyGroup{AzureKV: []string{keyURL}})
	head := l.commit("a Secret for Azure Key Vault")

	vars := gh.Env()
	vars["AZURE_TENANT_ID"], vars["AZURE_CLIENT_ID"] = a.Tenant, app
	aksCluster := "subscriptions/" + subscription + "/resourceGroups/shop/providers/Microsoft.ContainerService/managedClusters/prod-aks"
	unit := l.cloudRun(head, ns, vars, a, gh).input("aks-cluster", aksCluster)
	mode := "push (aks-cluster, Azure Key Vault)"
	res := l.run(mode, unit, "GitHub OIDC request token", "SOPS value")
	if res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	if n := l.scanTokens(mode, "Entra ID access", a.Tokens()); n == 0 {
		t.Error("no token reached the API server")
	}
	s, err := cluster.Client(t).CoreV1().Secrets(ns).Get(t.Context(), "creds", metav1.GetOptions{})
	if err != nil || string(s.Data["value"]) != leakSpecial {
		t.Fatalf("the Secret: %v", err)
	}
	if n := a.Count("ARM.ListClusterUserCredential"); n != 1 {
		t.Errorf("%d listClusterUserCredential, want 1", n)
	}
	if st := l.gh.lastStatus(); st == nil || st["context"] != "kustomize-deploy/prod-aks/app" {
		t.Errorf("status %v", st)
	}

	// A client secret Entra ID refuses (it wins over GitHub OIDC).
	l.encryptFor("deploy/app/creds.enc.yaml", "creds", leakData,
		sopstest.Services{AzureToken: a.IssueToken(admin, kmstest.AzureVaultAudience), HTTPClient: kmstest.Client(a)}, sopstest.KeyGroup{AzureKV: []string{keyURL}})
	head = l.commit("another value")
	const wrong = "wrong-client-secret~leak-0123"
	l.scan.Secret("refused client secret", wrong)
	l.scan.Unmasked("SOPS value, never decrypted", leakData)
	vars = map[string]string{"AZURE_TENANT_ID": a.Tenant, "AZURE_CLIENT_ID": secretApp, "AZURE_CLIENT_SECRET": wrong}
	refused := l.cloudRun(head, ns, vars, a, gh).input("aks-cluster", subscription+"/shop/prod-aks")
	res = l.run("push (refused client secret)", refused, "refused client secret")
	if res.code != exitFail || !strings.Contains(res.stdout, "connecting to the cluster (input 'aks-cluster'): AKS cluster "+subscription+"/shop/prod-aks: no token from the client secret (AZURE_CLIENT_SECRET) of application "+secretApp+": invalid_client: AADSTS7000215") {
		t.Fatalf("push with a refused client secret: exit %d\n%s", res.code, res.stdout)
	}
}

// The inputs that name a managed cluster are checked before anything
// runs: one cluster, not with a kubeconfig, well-formed names.
func TestManagedClusterInputErrors(t *testing.T) {
	tests := []struct {
		name   string
		inputs map[string]string
		want   []string
	}{
		{"two clusters", map[string]string{"eks-cluster": "prod", "gke-cluster": "projects/p/locations/l/clusters/c"},
			[]string{"input 'gke-cluster': 'eks-cluster' is set too"}},
		{"and a kubeconfig", map[string]string{"aks-cluster": "s/rg/c", "kubeconfig": "kubeconfig.yaml"},
			[]string{"input 'aks-cluster': 'kubeconfig' is set too"}},
		{"bad names", map[string]string{"gke-cluster": "prod"},
			[]string{`input 'gke-cluster': "prod": want projects/PROJECT/locations/LOCATION/clusters/NAME`}},
		{"bad AKS", map[string]string{"aks-cluster": "rg/prod"},
			[]string{`input 'aks-cluster': "rg/prod": want SUBSCRIPTION/RESOURCE_GROUP/NAME`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			given := map[string]string{"INPUT_PATH": "apps"}
			for k, v := range tt.inputs {
				given["INPUT_"+strings.ToUpper(k)] = v
			}
			_, err := inputs(given)
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want %q", err, w)
				}
			}
		})
	}
}

// GKE and GCP KMS from a self-hosted runner on a GCE VM, or in a GKE pod
// with Workload Identity: no credentials in the step's environment, the
// metadata server (here at GCE_METADATA_HOST) answers for the machine's
// (or the pod's bound) service account. clusters.get, the API server and
// Cloud KMS all get the token the metadata server issued; it never shows
// unmasked. A metadata server that does not answer fails the run naming
// gke-cluster and GCE_METADATA_HOST.
func TestLeakScanActionGKEMetadataServer(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	g := kmstest.NewGCP(t)
	const (
		gkeCluster = "projects/shop/locations/europe-west1/clusters/private-gke"
		runner     = "runner@shop.iam.gserviceaccount.com"
		admin      = "serviceAccount:admin@shop.iam.gserviceaccount.com"
	)
	meta := kmstest.NewGCEMetadata(t, g, runner)
	g.AddCluster(gkeCluster, strings.TrimPrefix(cluster.Config.Host, "https://"), cluster.Config.CAData)
	key := g.CreateKey("deploy", "sops")
	g.AllowKey(key, "serviceAccount:"+runner)
	g.AllowKey(key, admin)
	webhook.expectGKE(t, g)
	bindClusterAdmin(t, cloudGroup)

	l.scan.Secret("SOPS value", leakSpecial)
	l.write("deploy/app/kustomization.yaml", "resources: [creds.enc.yaml]\n")
	l.encryptFor("deploy/app/creds.enc.yaml", "creds", leakSpecial,
		sopstest.Services{GoogleToken: g.IssueToken(admin), HTTPClient: kmstest.Client(g)}, sopstest.KeyGroup{GCPKMS: []string{key}})
	head := l.commit("a Secret for GCP KMS")

	vars := map[string]string{"GCE_METADATA_HOST": meta.Host()}
	unit := l.cloudRun(head, ns, vars, g).input("gke-cluster", gkeCluster)
	mode := "push (gke-cluster, GCP KMS, metadata server)"
	res := l.run(mode, unit, "SOPS value")
	if res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	if n := l.scanTokens(mode, "metadata server", g.Tokens()); n == 0 {
		t.Error("no token reached the API server")
	}
	s, err := cluster.Client(t).CoreV1().Secrets(ns).Get(t.Context(), "creds", metav1.GetOptions{})
	if err != nil || string(s.Data["value"]) != leakSpecial {
		t.Fatalf("the Secret: %v", err)
	}
	for _, r := range g.Requests() {
		if (r.Target == "GKE.GetCluster" || r.Target == "KMS.Decrypt") && r.Principal != "serviceAccount:"+runner {
			t.Errorf("%s by %q", r.Target, r.Principal)
		}
	}
	if n := meta.Count("Metadata.Token"); n == 0 {
		t.Error("no token from the metadata server")
	}

	// No metadata server where GCE_METADATA_HOST says: no token, no cluster.
	refused := l.cloudRun(head, ns, map[string]string{"GCE_METADATA_HOST": "127.0.0.1:1"}, g).input("gke-cluster", gkeCluster)
	res = l.run("push (no metadata server)", refused)
	if res.code != exitFail || !strings.Contains(res.stdout, "connecting to the cluster (input 'gke-cluster'): GKE cluster "+gkeCluster+": the metadata server (GCE_METADATA_HOST=127.0.0.1:1): no answer from 127.0.0.1:1") {
		t.Fatalf("push without a metadata server: exit %d\n%s", res.code, res.stdout)
	}
}

// AKS and Azure Key Vault from a self-hosted runner on an Azure VM (or a
// scale set, or AKS) with a user-assigned managed identity, asked for in
// the step's env (AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential,
// AZURE_CLIENT_ID): IMDS gives the tokens for ARM, AKS's server
// application and Key Vault. The tokens sent to the API server are
// masked, none shows anywhere.
func TestLeakScanActionAKSManagedIdentity(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	a := kmstest.NewAzure(t)
	const (
		subscription = "00000000-1111-2222-3333-444444444444"
		identity     = "a1b2c3d4-0000-4000-8000-runneridentity"
		admin        = "a1b2c3d4-0000-4000-8000-admin0000001"
	)
	imds := kmstest.NewAzureIMDS(t, a, "", identity)
	a.AddApp(admin, "")
	a.AddCluster(subscription, "shop", "private-aks", cluster.Config.Host, cluster.Config.CAData, identity)
	vault, version := a.CreateKey("deployvault", "sops")
	a.AllowKey("deployvault", "sops", identity)
	a.AllowKey("deployvault", "sops", admin)
	webhook.expectAKS(t, a)
	bindClusterAdmin(t, cloudGroup)

	l.scan.Secret("SOPS value", leakSpecial)
	l.write("deploy/app/kustomization.yaml", "resources: [creds.enc.yaml]\n")
	l.encryptFor("deploy/app/creds.enc.yaml", "creds", leakSpecial,
		sopstest.Services{AzureToken: a.IssueToken(admin, kmstest.AzureVaultAudience), HTTPClient: kmstest.Client(a)}, sopstest.KeyGroup{AzureKV: []string{vault + "/keys/sops/" + version}})
	head := l.commit("a Secret for Azure Key Vault")

	vars := map[string]string{"AZURE_TOKEN_CREDENTIALS": "ManagedIdentityCredential", "AZURE_CLIENT_ID": identity}
	unit := l.cloudRun(head, ns, vars, a, imds).input("aks-cluster", subscription+"/shop/private-aks")
	mode := "push (aks-cluster, Azure Key Vault, managed identity)"
	res := l.run(mode, unit, "SOPS value")
	if res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	if n := l.scanTokens(mode, "IMDS", a.Tokens()); n == 0 {
		t.Error("no token reached the API server")
	}
	s, err := cluster.Client(t).CoreV1().Secrets(ns).Get(t.Context(), "creds", metav1.GetOptions{})
	if err != nil || string(s.Data["value"]) != leakSpecial {
		t.Fatalf("the Secret: %v", err)
	}
	resources := map[string]bool{}
	for _, r := range imds.Requests() {
		resources[r.Key] = r.Principal == identity
	}
	for _, want := range []string{kmstest.AzureARMAudience, kmstest.AKSAudience, kmstest.AzureVaultAudience} {
		if !resources[want] {
			t.Errorf("no token of the identity for %s from IMDS: %v", want, resources)
		}
	}
}

// AKS and Key Vault after azure/login on a self-hosted runner: the az
// CLI's session (~/.azure lists the account) gives the tokens; the
// tokens sent to the API server are masked, none shows anywhere.
func TestLeakScanActionAKSAzureCLI(t *testing.T) {
	ns := cluster.Namespace(t)
	l := newLeakRepo(t)
	l.gh.expect(statusCall)
	a := kmstest.NewAzure(t)
	const (
		subscription = "00000000-1111-2222-3333-444444444444"
		app          = "a1b2c3d4-0000-4000-8000-azlogin00001"
		admin        = "a1b2c3d4-0000-4000-8000-admin0000001"
	)
	a.AddApp(admin, "")
	a.AddCluster(subscription, "shop", "private-aks", cluster.Config.Host, cluster.Config.CAData, app)
	vault, version := a.CreateKey("deployvault", "sops")
	a.AllowKey("deployvault", "sops", app)
	a.AllowKey("deployvault", "sops", admin)
	webhook.expectAKS(t, a)
	bindClusterAdmin(t, cloudGroup)
	t.Setenv("PATH", a.AzCLI(t, app, kmstest.AzureARMAudience, kmstest.AKSAudience, kmstest.AzureVaultAudience)+string(os.PathListSeparator)+os.Getenv("PATH"))

	l.scan.Secret("SOPS value", leakSpecial)
	l.write("deploy/app/kustomization.yaml", "resources: [creds.enc.yaml]\n")
	l.encryptFor("deploy/app/creds.enc.yaml", "creds", leakSpecial,
		sopstest.Services{AzureToken: a.IssueToken(admin, kmstest.AzureVaultAudience), HTTPClient: kmstest.Client(a)}, sopstest.KeyGroup{AzureKV: []string{vault + "/keys/sops/" + version}})
	head := l.commit("a Secret for Azure Key Vault")

	unit := l.cloudRun(head, ns, map[string]string{"HOME": a.AzLoginHome(t, app)}, a).input("aks-cluster", subscription+"/shop/private-aks")
	mode := "push (aks-cluster, Azure Key Vault, az CLI)"
	res := l.run(mode, unit, "SOPS value")
	if res.code != exitOK {
		t.Fatalf("push: exit %d\n%s", res.code, res.stdout)
	}
	if n := l.scanTokens(mode, "az CLI", a.Tokens()); n == 0 {
		t.Error("no token reached the API server")
	}
	s, err := cluster.Client(t).CoreV1().Secrets(ns).Get(t.Context(), "creds", metav1.GetOptions{})
	if err != nil || string(s.Data["value"]) != leakSpecial {
		t.Fatalf("the Secret: %v", err)
	}
	for _, r := range a.Requests() {
		if (r.Target == "ARM.ListClusterUserCredential" || r.Target == "KeyVault.Decrypt") && r.Principal != app {
			t.Errorf("%s by %q", r.Target, r.Principal)
		}
	}
}
