package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// flux2-multi-tenancy's infrastructure, with no Flux: kyverno and
// kyverno-policies name kustomize-controller's own account in
// flux-system (the lockdown patches every Kustomization so), which this
// run stands in for, so they apply as the run's identity, with a note,
// instead of failing on an account that only the controllers' install
// makes; and kyverno, which waits (wait: true) for the kyverno-controller
// Kustomization it applies, is Ready in Flux only once that one is, so
// kyverno-policies, which depends on kyverno and needs the CRD that
// kyverno-controller applies, runs after kyverno-controller too.
func TestConfigMultiTenancyInfrastructure(t *testing.T) {
	c := newCLI(t)
	group := c.ns + ".example.com"
	repo := t.TempDir()
	w := func(p, content string) { writeFile(t, filepath.Join(repo, p), content) }
	ks := func(name, path, extra string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: flux-system\n" +
			"spec:\n  interval: 10m\n  path: " + path + "\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n" + extra
	}
	kyverno, policies, controller := c.ns+"-kyverno", c.ns+"-kyverno-policies", c.ns+"-kyverno-controller"
	w("clusters/production/infrastructure.yaml", ks(kyverno, "./infrastructure/kyverno", "  serviceAccountName: kustomize-controller\n  wait: true\n  timeout: 5m\n")+
		"---\n"+ks(policies, "./infrastructure/kyverno-policies", "  serviceAccountName: kustomize-controller\n  dependsOn:\n  - name: "+kyverno+"\n"))
	w("infrastructure/kyverno/kustomization.yaml", "resources:\n- sync.yaml\n")
	w("infrastructure/kyverno/sync.yaml", ks(controller, "./infrastructure/kyverno-controller", "  wait: true\n"))
	w("infrastructure/kyverno-controller/crd.yaml", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterpolicies.`+group+`
spec:
  group: `+group+`
  names: {kind: ClusterPolicy, plural: clusterpolicies, singular: clusterpolicy, listKind: ClusterPolicyList}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`)
	t.Cleanup(func() {
		_ = dynamic.NewForConfigOrDie(cluster.Config).Resource(crdResource).Delete(context.Background(), "clusterpolicies."+group, metav1.DeleteOptions{})
	})
	w("infrastructure/kyverno-policies/kustomization.yaml", "resources:\n- verify.yaml\n")
	w("infrastructure/kyverno-policies/verify.yaml", "apiVersion: "+group+"/v1\nkind: ClusterPolicy\nmetadata:\n  name: verify-git-repositories\nspec:\n  validationFailureAction: Audit\n")
	gitInit(t, repo)

	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/production"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	for _, name := range []string{kyverno, policies} {
		r := got[name]
		if r == nil || r.Reason != result.ReasonApplySucceed {
			t.Fatalf("%s: %+v", name, r)
		}
		contains(t, name+"'s notes", strings.Join(r.Notes, "\n"), "spec.serviceAccountName kustomize-controller is kustomize-controller's own account in namespace flux-system: the unit applies as this run's identity")
	}
	contains(t, policies+"'s notes", strings.Join(got[policies].Notes, "\n"), "runs after "+controller+" (which "+kyverno+" waits for) too")
	if r := got[controller]; r == nil || r.Reason != result.ReasonApplySucceed {
		t.Fatalf("%s: %+v", controller, r)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "clusterpolicies"}
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(gvr).Get(t.Context(), "verify-git-repositories", metav1.GetOptions{}); err != nil {
		t.Errorf("the policy: %v", err)
	}
}

// Flux's multi-tenancy lockdown, declared as flux2-multi-tenancy declares
// it (patches adding --no-cross-namespace-refs, --no-remote-bases and
// --default-service-account=default to the controllers' Deployments in
// flux-system/kustomization.yaml), is honoured with no controller in the
// cluster: the tenant's Kustomizations and HelmRelease, which name no
// serviceAccountName, apply as the tenant namespace's default account:
// what its Role allows applies, what it does not is refused by the API
// server in its own words; a sourceRef and a chart in the platform's
// namespace are refused (AccessDenied, the controllers' messages) while
// the rest of the configuration applies. Before the lockdown was read,
// every tenant unit applied as the run's own identity.
func TestConfigLockdownFromControllerFlags(t *testing.T) {
	c := newCLI(t)
	repo, tenant := lockdownRepo(t, c)
	// Remote bases allowed by the run are refused by the lockdown.
	o, s := c.runConfig("apply", "--verbose", "--allow-remote-bases", "--config", filepath.Join(repo, "clusters/local"))
	if o.code != exitFail {
		t.Fatalf("exit %d, want the run failed\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	for _, name := range []string{"flux-system", "tenants", "allowed"} {
		if r := got[name]; r == nil || r.Reason != result.ReasonApplySucceed {
			t.Fatalf("%s: %+v\n%s", name, r, o.stderr)
		}
	}
	contains(t, "the run's notes", o.stderr,
		"Flux's multi-tenancy lockdown of kustomize-controller takes effect: --default-service-account=default (clusters/local/flux-system/kustomization.yaml:",
		"--no-cross-namespace-refs=true (clusters/local/flux-system/kustomization.yaml:", "--no-remote-bases=true (clusters/local/flux-system/kustomization.yaml:",
		"Flux's multi-tenancy lockdown of helm-controller takes effect")
	contains(t, "the tenants unit's notes", strings.Join(got["tenants"].Notes, "\n"), "kustomize-controller's own account in namespace "+c.ns+": the unit applies as this run's identity")
	contains(t, "the tenants unit's progress", o.stderr, "[tenants] note: HelmRelease "+c.ns+"/platform: installed as the unit: helm-controller is helm-controller's own account in namespace "+c.ns)
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "platform", metav1.GetOptions{}); err != nil {
		t.Errorf("the platform's release: %v", err)
	}
	contains(t, "allowed's notes", strings.Join(got["allowed"].Notes, "\n"),
		"applies as "+tenant+"/default (system:serviceaccount:"+tenant+":default): it has no spec.serviceAccountName, and Flux's multi-tenancy lockdown gives kustomize-controller --default-service-account=default (clusters/local/flux-system/kustomization.yaml:")
	contains(t, "allowed's progress", o.stderr,
		"[allowed] note: HelmRelease "+tenant+"/hello: installed as system:serviceaccount:"+tenant+":default, helm-controller's --default-service-account=default (clusters/local/flux-system/kustomization.yaml:")
	k := cluster.Client(t)
	for _, name := range []string{"allowed", "hello"} {
		if _, err := k.CoreV1().ConfigMaps(tenant).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			t.Errorf("ConfigMap %s within the tenant's rights: %v", name, err)
		}
	}
	forbidden := got["forbidden"]
	if forbidden == nil || forbidden.Ready {
		t.Fatalf("forbidden: %+v", forbidden)
	}
	contains(t, "forbidden's message", forbidden.Message, `User "system:serviceaccount:`+tenant+`:default" cannot`, `in the namespace "`+c.ns+`"`)
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "forbidden", metav1.GetOptions{}); err == nil {
		t.Error("the tenant created a ConfigMap in the platform's namespace")
	}
	cross := got["cross"]
	if cross == nil || cross.Reason != result.ReasonAccessDenied {
		t.Fatalf("cross: %+v", cross)
	}
	contains(t, "cross's message", cross.Message, "Kustomization "+tenant+"/cross (tenants/sync.yaml:",
		"spec.sourceRef: can't access 'GitRepository/"+c.ns+"/flux-system', cross-namespace references have been blocked (kustomize-controller's --no-cross-namespace-refs=true, clusters/local/flux-system/kustomization.yaml:")
	helmCross := got["helm-cross"]
	if helmCross == nil || helmCross.Reason != result.ReasonAccessDenied {
		t.Fatalf("helm-cross: %+v", helmCross)
	}
	contains(t, "helm-cross's message", helmCross.Message, "HelmRelease "+tenant+"/hello-cross",
		"spec.chart.spec.sourceRef: cross-namespace references are not allowed: cannot access HelmChart "+c.ns+"/"+tenant+"-hello-cross (helm-controller's --no-cross-namespace-refs=true")
	remote := got["remote"]
	if remote == nil || remote.Reason != result.ReasonBuildFailed {
		t.Fatalf("remote: %+v", remote)
	}
	contains(t, "remote's message", remote.Message, `resources entry "https://github.com/example/app//deploy?ref=v1" is remote: remote bases are disabled: Flux's multi-tenancy lockdown gives kustomize-controller --no-remote-bases=true (clusters/local/flux-system/kustomization.yaml:`)
	if strings.Contains(o.stderr, "hint: --allow-remote-bases") {
		t.Errorf("a hint to allow remote bases, which the lockdown refuses:\n%s", o.stderr)
	}
	for _, name := range []string{"cross", "hello-cross"} {
		if _, err := k.CoreV1().ConfigMaps(tenant).Get(t.Context(), name, metav1.GetOptions{}); err == nil {
			t.Errorf("ConfigMap %s of a refused unit was applied", name)
		}
	}
}

// The same lockdown declared as d2-fleet declares it, by a FluxInstance's
// spec.cluster.multitenant with tenantDefaultServiceAccount: Flux
// Operator's flags, its sync as kustomize-controller; the tenant's
// Kustomizations apply as that account of their namespace, a
// cross-namespace sourceRef is refused.
func TestConfigLockdownFromFluxInstance(t *testing.T) {
	c := newCLI(t)
	repo, tenant := lockdownRepo(t, c)
	gitOut(t, repo, "rm", "-q", "-r", "clusters/local/flux-system")
	writeFile(t, filepath.Join(repo, "clusters/local/flux-system/flux-instance.yaml"), `apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: `+c.ns+`
spec:
  distribution:
    version: "2.x"
    registry: ghcr.io/fluxcd
  cluster:
    multitenant: true
    tenantDefaultServiceAccount: flux
  sync:
    kind: GitRepository
    name: flux-system
    url: https://git.example/fleet.git
    ref: refs/heads/main
    path: clusters/local
`)
	rbac := filepath.Join(repo, "tenants/rbac.yaml")
	data, err := os.ReadFile(rbac)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, rbac, strings.ReplaceAll(string(data), "name: default", "name: flux"))
	gitOut(t, repo, "add", "-A")
	gitOut(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "operator")

	o, s := c.runConfig("apply", "--verbose", "--config", filepath.Join(repo, "clusters/local"))
	if o.code != exitFail {
		t.Fatalf("exit %d, want the run failed\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	for _, name := range []string{"flux-system", "tenants", "allowed"} {
		if r := got[name]; r == nil || r.Reason != result.ReasonApplySucceed {
			t.Fatalf("%s: %+v\n%s", name, r, o.stderr)
		}
	}
	contains(t, "the run's notes", o.stderr,
		"Flux's multi-tenancy lockdown of kustomize-controller takes effect: --default-service-account=flux (clusters/local/flux-system/flux-instance.yaml:12 (FluxInstance "+c.ns+"/flux spec.cluster.tenantDefaultServiceAccount)), --no-cross-namespace-refs=true (clusters/local/flux-system/flux-instance.yaml:11 (FluxInstance "+c.ns+"/flux spec.cluster.multitenant)), --no-remote-bases=true")
	contains(t, "the sync's notes", strings.Join(got["flux-system"].Notes, "\n"), "kustomize-controller's own account in namespace "+c.ns+": the unit applies as this run's identity")
	seen := map[string]bool{}
	for _, line := range strings.Split(o.stderr, "\n") {
		if strings.HasPrefix(line, "note: ") && seen[line] {
			t.Errorf("a note printed twice: %s", line)
		}
		seen[line] = true
	}
	contains(t, "allowed's notes", strings.Join(got["allowed"].Notes, "\n"), "applies as "+tenant+"/flux (system:serviceaccount:"+tenant+":flux)")
	forbidden := got["forbidden"]
	if forbidden == nil || forbidden.Ready {
		t.Fatalf("forbidden: %+v", forbidden)
	}
	contains(t, "forbidden's message", forbidden.Message, `User "system:serviceaccount:`+tenant+`:flux" cannot`)
	if r := got["cross"]; r == nil || r.Reason != result.ReasonAccessDenied {
		t.Fatalf("cross: %+v", r)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(tenant).Get(t.Context(), "allowed", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap allowed: %v", err)
	}
}

// A repository whose controllers are installed elsewhere declares no
// lockdown: --default-service-account and --no-cross-namespace-refs give
// it, as the controllers' flags of the same names would, and the run
// says they took effect.
func TestConfigLockdownGivenToTheRun(t *testing.T) {
	c := newCLI(t)
	repo, tenant := lockdownRepo(t, c)
	writeFile(t, filepath.Join(repo, "clusters/local/flux-system/kustomization.yaml"), "resources:\n- gotk-sync.yaml\n")
	gitOut(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-am", "no lockdown")

	o, s := c.runConfig("apply", "--verbose", "--default-service-account=default", "--no-cross-namespace-refs", "--config", filepath.Join(repo, "clusters/local"))
	if o.code != exitFail {
		t.Fatalf("exit %d, want the run failed\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "the run's notes", o.stderr,
		"Flux's multi-tenancy lockdown of kustomize-controller takes effect: --default-service-account=default (given to this run), --no-cross-namespace-refs=true (given to this run)")
	got := unitsByName(s)
	if r := got["allowed"]; r == nil || r.Reason != result.ReasonApplySucceed {
		t.Fatalf("allowed: %+v", r)
	}
	contains(t, "forbidden's message", got["forbidden"].Message, `User "system:serviceaccount:`+tenant+`:default" cannot`)
	if r := got["cross"]; r == nil || r.Reason != result.ReasonAccessDenied {
		t.Fatalf("cross: %+v", r)
	}
}

// A pull request that changes the lockdown (the patch of the
// controllers' flags) changes as whom every unit runs: its offline diff
// renders every unit, saying why; one that changes nothing renders only
// what its change reaches.
func TestConfigDiffLockdownChangeReachesEveryUnit(t *testing.T) {
	c := newCLI(t)
	repo, _ := lockdownRepo(t, c)
	cfg := filepath.Join(repo, "clusters/local")
	_, before := c.runConfig("diff", "--offline", "--base", "HEAD", "--config", cfg)
	if before.Reach == nil || before.Reach.Rendered == before.Reach.Units {
		t.Fatalf("no change: reach %+v", before.Reach)
	}
	patches := filepath.Join(repo, "clusters/local/flux-system/kustomization.yaml")
	data, err := os.ReadFile(patches)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, patches, strings.Replace(string(data), "--default-service-account=default", "--default-service-account=tenant", 1))
	o, after := c.runConfig("diff", "--offline", "--base", "HEAD", "--config", cfg)
	r := after.Reach
	if r == nil || r.Rendered != r.Units || r.Units != before.Reach.Units {
		t.Fatalf("reach %+v\n%s", r, o.stderr)
	}
	contains(t, "why allowed is rendered", r.Why["allowed"], "Flux's multi-tenancy lockdown may have changed (clusters/local/flux-system/kustomization.yaml)")
}

// lockdownRepo is testdata/lockdown-multitenancy in c's namespace, a git
// repository whose origin is the URL of the tenants' GitRepository (so
// it is this repository), and the tenant's namespace, deleted after the
// test.
func lockdownRepo(t *testing.T, c *cli) (repo, tenant string) {
	t.Helper()
	tenant = c.ns + "-tenant"
	t.Cleanup(func() {
		_ = cluster.Client(t).CoreV1().Namespaces().Delete(context.Background(), tenant, metav1.DeleteOptions{})
	})
	repo = gitFixture(t, "lockdown-multitenancy", "NAMESPACE", c.ns)
	gitOut(t, repo, "remote", "add", "origin", "https://git.example/fleet.git")
	return repo, tenant
}
