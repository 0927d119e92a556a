package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// bootstrapRepo writes the bootstrap-repo fixture (a flux bootstrap
// layout with a tenant's Namespace, ServiceAccount and RoleBinding beside
// its Kustomization) as a repository of its own, with namespaces of this
// test standing for flux-system and the tenant's; both are removed after
// the test. It returns the repository and the two namespaces.
func bootstrapRepo(t *testing.T, c *cli) (repo, fluxNS, tenant string) {
	t.Helper()
	fluxNS, tenant = c.ns+"-flux", c.ns+"-ms"
	repo = gitFixture(t, "bootstrap-repo", "FLUXNS", fluxNS, "TENANT", tenant)
	k := cluster.Client(t)
	t.Cleanup(func() {
		for _, ns := range []string{fluxNS, tenant} {
			_ = k.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{})
		}
	})
	return repo, fluxNS, tenant
}

// A bootstrap directory's objects beside its Kustomizations (the tenant's
// Namespace, ServiceAccount and RoleBinding) are applied by Flux's own
// sync, first; the tenant's unit then applies as its account. Given as
// the sync's own file, the configuration deploys the same objects.
func TestConfigDirectoryRunsFluxsSync(t *testing.T) {
	c := newCLI(t)
	repo, fluxNS, tenant := bootstrapRepo(t, c)
	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/demo"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	sync, tenantUnit := got["flux-system"], got["msdemo"]
	if sync == nil || sync.Reason != result.ReasonApplySucceed || tenantUnit == nil || tenantUnit.Reason != result.ReasonApplySucceed {
		t.Fatalf("units: %v\n%s", names(s), o.stderr)
	}
	applied := map[string]bool{}
	for _, e := range sync.Entries {
		applied[e.Object.String()] = true
	}
	for _, id := range []string{"Namespace/" + tenant, "ServiceAccount/" + tenant + "/flux", "RoleBinding/" + tenant + "/flux", "Namespace/" + fluxNS} {
		if !applied[id] {
			t.Errorf("Flux's own sync did not apply %s: %v", id, applied)
		}
	}
	if applied["ServiceAccount/"+fluxNS+"/kustomize-controller"] {
		t.Error("Flux's own controllers were installed")
	}
	if tenantUnit.StartedAt.Before(sync.StartedAt) {
		t.Error("the tenant's unit started before the sync that applies its account")
	}
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(tenant).Get(t.Context(), "frontend", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if by := cm.ManagedFields; len(by) == 0 {
		t.Error("no managed fields on the tenant's object")
	}

	inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, "msdemo")
	if inv == nil {
		t.Fatal("msdemo has no inventory")
	}
	config := inv.Status.Config

	// The root file: the same units, every object already as it wants it,
	// one configuration with the directory.
	root := filepath.Join(repo, "clusters/demo/flux-system/gotk-sync.yaml")
	o, s = c.runConfig("diff", "--config", root)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("diff of the root file: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if strings.Join(names(s), ",") != "flux-system,msdemo" {
		t.Errorf("units of the root file: %v", names(s))
	}
	for _, r := range s.Units {
		if r.Changed() {
			t.Errorf("%s would change given as the root file: %+v", r.Unit, r.Entries)
		}
	}
	if o, s = c.runConfig("apply", "--config", root); o.code != exitOK || !s.Ready {
		t.Fatalf("apply of the root file: exit %d\n%s", o.code, o.stderr)
	}
	if inv, _ = inventory.Load(t.Context(), runtimeClient(t), c.ns, "msdemo"); inv == nil || inv.Status.Config != config {
		t.Errorf("the root file is another configuration than its directory: %+v, want %q", inv, config)
	}
}

// A pull request's diff of a new cluster, before its first apply: what the
// sync would create (the tenant's Namespace, its account and the account's
// rights) counts as present for the tenant's unit, whose objects are
// listed as created; the account's rights are checked once it exists, and
// the diff says so. Nothing is written.
func TestConfigFirstDiffOfANewCluster(t *testing.T) {
	c := newCLI(t)
	repo, _, tenant := bootstrapRepo(t, c)
	o, s := c.runConfig("diff", "--config", filepath.Join(repo, "clusters/demo"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	r := unitsByName(s)["msdemo"]
	if r == nil || r.Reason != result.ReasonDiffSucceed {
		t.Fatalf("msdemo: %+v", r)
	}
	if len(r.Entries) != 1 || r.Entries[0].Action != result.Created || r.Entries[0].Object.String() != "ConfigMap/"+tenant+"/frontend" {
		t.Errorf("msdemo's entries: %+v", r.Entries)
	}
	contains(t, "msdemo's notes", strings.Join(r.Notes, "\n"), "ServiceAccount "+tenant+"/flux does not exist yet: unit flux-system, run before this one, creates it", "its rights are checked once it exists")
	if _, err := cluster.Client(t).CoreV1().Namespaces().Get(t.Context(), tenant, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the diff created the tenant's namespace: %v", err)
	}
	if invs, _ := inventory.List(t.Context(), runtimeClient(t), c.ns); len(invs) != 0 {
		t.Errorf("%d inventories written by a diff", len(invs))
	}
}

// A unit impersonating a service account that does not exist fails
// saying so, not blaming the account's rights; when a unit of the run
// holds the account, it is named.
func TestConfigMissingServiceAccount(t *testing.T) {
	c := newCLI(t)
	repo, _, tenant := bootstrapRepo(t, c)
	file := filepath.Join(repo, "clusters/demo/msdemo.yaml")
	data, _ := os.ReadFile(file)
	writeFile(t, file, strings.Replace(string(data), "  serviceAccountName: flux\n", "  serviceAccountName: fluxx\n", 1))
	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/demo"))
	if o.code != exitFail {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	r := unitsByName(s)["msdemo"]
	if r == nil || r.Reason != result.ReasonValidationFailed { // the dry-run, validating, would have failed
		t.Fatalf("msdemo: %+v", r)
	}
	contains(t, "msdemo's message", r.Message, "ServiceAccount "+tenant+"/fluxx does not exist", "no unit of this run is known to create it")
	if strings.Contains(r.Message, "forbidden") {
		t.Errorf("the message blames RBAC: %s", r.Message)
	}
}

// delete --config deletes every unit of a configuration, the tenant's
// before the sync that applies its Namespace, within the prune budget
// (more units than --max-collect are refused, nothing deleted); run
// again, or for a unit with no inventory, it has nothing to delete and
// succeeds, so a teardown script may run twice.
func TestDeleteConfig(t *testing.T) {
	c := newCLI(t)
	repo, _, tenant := bootstrapRepo(t, c)
	cfg := filepath.Join(repo, "clusters/demo")
	if o, s := c.runConfig("apply", "--config", cfg); o.code != exitOK || !s.Ready {
		t.Fatalf("apply: exit %d\n%s", o.code, o.stderr)
	}
	k := cluster.Client(t)

	o, s := c.runConfig("delete", "--config", cfg, "--max-collect", "1")
	if o.code != exitFail || s.Ready {
		t.Fatalf("over the budget: exit %d\n%s", o.code, o.stderr)
	}
	contains(t, "over the budget", unitsByName(s)["msdemo"].Message, "refusing to delete 2 unit(s) of the configuration (flux-system, msdemo)", "none is deleted")
	contains(t, "hint", o.stderr, "--force-prune")
	if _, err := k.CoreV1().ConfigMaps(tenant).Get(t.Context(), "frontend", metav1.GetOptions{}); err != nil {
		t.Fatalf("a delete over the budget deleted: %v", err)
	}

	o, s = c.runConfig("delete", "--config", cfg)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("delete: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	sync, tenantUnit := got["flux-system"], got["msdemo"]
	if sync == nil || sync.Reason != result.ReasonDeleteSucceed || tenantUnit == nil || tenantUnit.Reason != result.ReasonDeleteSucceed {
		t.Fatalf("units: %+v %+v", sync, tenantUnit)
	}
	if sync.StartedAt.Before(tenantUnit.StartedAt) {
		t.Error("the sync was deleted before the tenant's unit, which depends on it")
	}
	if _, err := k.CoreV1().ConfigMaps(tenant).Get(t.Context(), "frontend", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the tenant's object: %v", err)
	}
	if ns, err := k.CoreV1().Namespaces().Get(t.Context(), tenant, metav1.GetOptions{}); err == nil && ns.DeletionTimestamp == nil {
		t.Error("the tenant's Namespace, applied by the sync, is still there")
	}
	if invs, _ := inventory.List(t.Context(), runtimeClient(t), c.ns); len(invs) != 0 {
		t.Errorf("%d inventories left", len(invs))
	}

	// Again: nothing to delete, a success.
	o, s = c.runConfig("delete", "--config", cfg)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("delete again: exit %d\n%s", o.code, o.stderr)
	}
	for _, r := range s.Units {
		contains(t, r.Unit, r.Message, "nothing to delete")
	}
	o = c.run("delete", "--name", "msdemo")
	if o.code != exitOK {
		t.Fatalf("delete --name of a unit with no inventory: exit %d\n%s", o.code, o.stderr)
	}
	contains(t, "delete --name", o.stdout+o.stderr, "nothing to delete")
}

// An OCI-artifact layout (Flux Operator's fleets): apps-sync builds the
// root ("./") of an OCIRepository, which is no sync of the configuration:
// it is planned and applied, from the directory mapped to the artifact;
// the artifact's spec.verify, which the pull would have checked, is said
// not to be, worded by what it feeds.
func TestConfigOCIArtifactRootIsAUnit(t *testing.T) {
	c := newCLI(t)
	repo, _, tenant := bootstrapRepo(t, c)
	writeFile(t, filepath.Join(repo, "clusters/demo/apps-sync.yaml"), `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: apps
  namespace: `+tenant+`
spec:
  interval: 10m
  url: oci://127.0.0.1:1/acme/apps
  ref:
    tag: latest
  verify:
    provider: cosign
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps-sync
  namespace: `+tenant+`
spec:
  interval: 10m
  path: ./
  prune: true
  targetNamespace: `+tenant+`
  sourceRef:
    kind: OCIRepository
    name: apps
`)
	gitOut(t, repo, "add", "-A")
	gitOut(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "apps")
	artifact := t.TempDir()
	writeFile(t, filepath.Join(artifact, "backend.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: backend\ndata:\n  from: artifact\n")
	cfg := filepath.Join(repo, "clusters/demo")
	source := "OCIRepository/" + tenant + "/apps=" + artifact

	p := c.runAsIs("plan", "--config", cfg, "-o", "json")
	if p.code != exitOK {
		t.Fatalf("plan: exit %d\n%s", p.code, p.stderr)
	}
	contains(t, "plan", p.stdout, "apps-sync")
	o, s := c.runConfig("apply", "--config", cfg, "--source", source)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if r := unitsByName(s)["apps-sync"]; r == nil || r.Reason != result.ReasonApplySucceed {
		t.Fatalf("apps-sync: %+v", r)
	}
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(tenant).Get(t.Context(), "backend", metav1.GetOptions{})
	if err != nil || cm.Data["from"] != "artifact" {
		t.Errorf("the artifact's object: %v %v", cm, err)
	}
	contains(t, "the warning", o.stderr, "warning: OCIRepository/"+tenant+"/apps (clusters/demo/apps-sync.yaml:1): spec.verify is not checked: the source is mapped to", "which stands in for the pull that would verify it; the manifests of the Kustomizations naming it are built from")
}

// A diff of a unit whose custom resources' CRD comes with the unit it
// depends on, before either was applied: the kind counts as served, its
// objects as created, as they will be.
func TestConfigFirstDiffOfCustomResourcesOfAnEarlierUnit(t *testing.T) {
	c := newCLI(t)
	group := c.ns + ".example.com"
	repo := t.TempDir()
	w := func(p, content string) { writeFile(t, filepath.Join(repo, p), content) }
	ks := func(name, path, extra string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: " + c.ns +
			"\nspec:\n  interval: 10m\n  path: " + path + "\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n" + extra
	}
	w("clusters/demo/crds.yaml", ks("crds", "./crds", ""))
	w("clusters/demo/widgets.yaml", ks("widgets", "./widgets", "  dependsOn:\n  - name: crds\n"))
	w("crds/crd.yaml", widgetCRD(group))
	w("widgets/widget.yaml", "apiVersion: "+group+"/v1\nkind: Widget\nmetadata:\n  name: gear\n  namespace: "+c.ns+"\nspec:\n  size: 3\n")
	gitInit(t, repo)
	o, s := c.runConfig("diff", "--config", filepath.Join(repo, "clusters/demo"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	r := unitsByName(s)["widgets"]
	if r == nil || len(r.Entries) != 1 || r.Entries[0].Action != result.Created {
		t.Errorf("widgets: %+v", r)
	}
}

// The account deleted from the cluster behind the sync's back: the
// tenant's unit, run alone, names the unit that applies the account.
func TestConfigMissingServiceAccountNamesItsUnit(t *testing.T) {
	c := newCLI(t)
	repo, _, tenant := bootstrapRepo(t, c)
	cfg := filepath.Join(repo, "clusters/demo")
	if o, s := c.runConfig("apply", "--config", cfg); o.code != exitOK || !s.Ready {
		t.Fatalf("apply: exit %d\n%s", o.code, o.stderr)
	}
	if err := cluster.Client(t).CoreV1().ServiceAccounts(tenant).Delete(t.Context(), "flux", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	o, s := c.runConfig("apply", "--config", cfg, "--name", "msdemo", "--recheck")
	if o.code != exitFail {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	r := unitsByName(s)["msdemo"]
	if r == nil {
		t.Fatal("no result for msdemo")
	}
	contains(t, "msdemo's message", r.Message, "ServiceAccount "+tenant+"/flux does not exist", "unit flux-system creates it, and must apply before this unit")
}
