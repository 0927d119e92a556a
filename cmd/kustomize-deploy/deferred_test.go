package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/ocitest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// tenantRegistry is a registry that wants credentials, holding a tenant's
// artifact (./deploy/cm.yaml: ConfigMap app, from: artifact) at
// HOST/tenant/app:latest (its environment: env-${ENVIRONMENT:=none},
// for a unit that substitutes), and the password it wants.
func tenantRegistry(t *testing.T, password string) string {
	t.Helper()
	reg := helmtest.NewRegistryWithAuth(t, "flux", password)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  from: artifact\n  environment: env-${ENVIRONMENT:=none}\n"
	ocitest.Push(t, reg.Host+"/tenant/app:latest", ocitest.Flux(t, map[string]string{"deploy/cm.yaml": cm},
		"https://github.com/acme/tenant", "main@sha1:0123456789abcdef0123456789abcdef01234567"), "flux", password, nil)
	return reg.Host
}

// tenantNamespace is a namespace for a test's tenant, which the
// configuration creates: deleted when the test ends.
func tenantNamespace(t *testing.T, c *cli) string {
	t.Helper()
	tenant := c.ns + "-tenant"
	t.Cleanup(func() {
		_ = cluster.Client(t).CoreV1().Namespaces().Delete(t.Context(), tenant, metav1.DeleteOptions{})
	})
	return tenant
}

func namespaceYAML(name string) string {
	return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + "\n"
}

func pullSecretYAML(namespace, name, host, password string) string {
	return "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\nmetadata:\n  name: " + name + "\n  namespace: " + namespace +
		"\nstringData:\n  .dockerconfigjson: '" + dockerConfig(host, "flux", password) + "'\n"
}

// credentialsFromEarlierUnit is a configuration of two units: creds (this
// checkout's ./creds: the tenant's namespace and, with secret, its pull
// Secret regcred; more, when set, is one more file of it) and app, which depends on creds and builds from
// OCIRepository app, pulled with spec.secretRef regcred.
func credentialsFromEarlierUnit(t *testing.T, c *cli, tenant, host, password string, secret bool, more string) string {
	t.Helper()
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "creds/namespace.yaml"), namespaceYAML(tenant))
	if more != "" {
		writeFile(t, filepath.Join(repo, "creds/more.yaml"), more)
	}
	if secret {
		writeFile(t, filepath.Join(repo, "creds/regcred.yaml"), pullSecretYAML(tenant, "regcred", host, password))
	}
	writeFile(t, filepath.Join(repo, "clusters/local/units.yaml"), fluxKustomization("creds", c.ns, "GitRepository/flux-system", "./creds", "")+`---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: app
  namespace: `+tenant+`
spec:
  interval: 5m
  url: oci://`+host+`/tenant/app
  ref:
    tag: latest
  secretRef:
    name: regcred
---
`+fluxKustomization("app", tenant, "OCIRepository/app", "./deploy", "  dependsOn:\n    - name: creds\n      namespace: "+c.ns+"\n  targetNamespace: "+tenant+"\n"))
	initRepo(t, repo, "git@github.com:acme/fleet.git")
	return filepath.Join(repo, "clusters/local")
}

// On a first deploy, a source whose pull Secret an earlier unit creates
// is pulled at its unit's turn: one apply from an empty cluster deploys
// both units. A diff before it (against the cluster, or offline), which
// applies nothing, skips the unit saying where its credentials come
// from, instead of failing it for a missing Secret. The password shows nowhere.
func TestConfigSourceSecretFromEarlierUnit(t *testing.T) {
	c := newCLI(t)
	const password = "deferred-pw-41c9e7"
	host := tenantRegistry(t, password)
	tenant := tenantNamespace(t, c)
	config := credentialsFromEarlierUnit(t, c, tenant, host, password, true, "")

	o, s := c.runConfig("diff", "--config", config)
	if o.code == exitFail || !s.Ready {
		t.Fatalf("diff: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if r := unitsByName(s)["app"]; r == nil || r.Reason != result.ReasonSourceDeferred || r.Failed() {
		t.Fatalf("diff: app %+v", r)
	} else {
		contains(t, "app's diff", r.Message, "spec.sourceRef OCIRepository/"+tenant+"/app reads its credentials from Secret "+tenant+"/regcred, which unit creds creates and this run does not apply")
	}
	if r := unitsByName(s)["creds"]; r == nil || r.Reason != result.ReasonDiffSucceed {
		t.Errorf("diff: creds %+v", r)
	}
	// Offline (a fork's pull request), the same.
	o = c.runAsIs("diff", "--config", config, "--offline", "--base", "HEAD", "--all-units", "-o", "json", "--kubeconfig", filepath.Join(t.TempDir(), "none"))
	if s := decodeSet(t, o); o.code == exitFail || !s.Ready {
		t.Fatalf("offline diff: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	} else if r := unitsByName(s)["app"]; r == nil || r.Reason != result.ReasonSourceDeferred || !strings.Contains(r.Message, "which unit creds creates and this run does not apply") {
		t.Fatalf("offline diff: app %+v", r)
	}

	o, s = c.runConfig("apply", "--config", config, "--verbose")
	if o.code != exitOK || !s.Ready {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	r := unitsByName(s)["app"]
	if r == nil || r.Reason != result.ReasonApplySucceed || !strings.HasPrefix(r.Revision, "latest@sha256:") {
		t.Fatalf("apply: app %+v", r)
	}
	contains(t, "app's notes", strings.Join(r.Notes, "\n"), "spec.sourceRef OCIRepository/"+tenant+"/app was resolved at this unit's turn: it reads its credentials from Secret "+tenant+"/regcred, which unit creds, applied before it, creates")
	contains(t, "the warnings", o.stderr, "unit app", "resolved at this unit's turn, once creds has been applied")
	got, err := cluster.Client(t).CoreV1().ConfigMaps(tenant).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil || got.Data["from"] != "artifact" {
		t.Errorf("the artifact's ConfigMap: %v %v", err, got)
	}
	if strings.Contains(o.stdout+o.stderr, password) {
		t.Errorf("the password shows:\n%s\n%s", o.stdout, o.stderr)
	}

	// Now that the Secret exists, the source resolves as the
	// configuration opens, as any other.
	o, s = c.runConfig("apply", "--config", config, "--verbose")
	if r := unitsByName(s)["app"]; o.code != exitOK || r == nil || r.Reason != result.ReasonApplySucceed || strings.Contains(strings.Join(r.Notes, "\n"), "resolved at this unit's turn") {
		t.Errorf("second apply: exit %d %+v\n%s", o.code, r, o.stderr)
	}
}

// d2-fleet's tenants: a unit emits the tenant's Kustomization, its
// OCIRepository pulling as spec.serviceAccountName flux, and that
// account with its imagePullSecrets: one apply from an empty cluster
// creates the account, then pulls as it and deploys the tenant.
func TestConfigSourceAccountFromTheUnitThatEmitsIt(t *testing.T) {
	c := newCLI(t)
	const password = "deferred-sa-pw-93d0b2"
	host := tenantRegistry(t, password)
	tenant := tenantNamespace(t, c)
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "tenants/tenant.yaml"), namespaceYAML(tenant)+"---\n"+pullSecretYAML(tenant, "ghcr-auth", host, password)+`---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: flux
  namespace: `+tenant+`
imagePullSecrets:
  - name: ghcr-auth
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: app
  namespace: `+tenant+`
spec:
  interval: 5m
  serviceAccountName: flux
  url: oci://`+host+`/tenant/app
  ref:
    tag: latest
---
`+fluxKustomization("app", tenant, "OCIRepository/app", "./deploy", "  targetNamespace: "+tenant+"\n"))
	writeFile(t, filepath.Join(repo, "clusters/local/tenants.yaml"), fluxKustomization("tenants", c.ns, "GitRepository/flux-system", "./tenants", ""))
	initRepo(t, repo, "git@github.com:acme/fleet.git")
	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/local"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if r := unitsByName(s)["app"]; r == nil || r.Reason != result.ReasonApplySucceed {
		t.Fatalf("app: %+v", r)
	} else {
		contains(t, "app's notes", strings.Join(r.Notes, "\n"), "it reads its credentials from ServiceAccount "+tenant+"/flux, which unit tenants, applied before it, creates")
	}
	got, err := cluster.Client(t).CoreV1().ConfigMaps(tenant).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil || got.Data["from"] != "artifact" {
		t.Errorf("the artifact's ConfigMap: %v %v", err, got)
	}
	if strings.Contains(o.stdout+o.stderr, password) {
		t.Errorf("the password shows:\n%s\n%s", o.stdout, o.stderr)
	}
}

// A pull Secret no unit creates is no reason to wait: the unit fails as
// the configuration opens, naming the Secret and where the source is
// defined, in a diff as in an apply.
func TestConfigSourceSecretNobodyCreatesFailsAtOnce(t *testing.T) {
	c := newCLI(t)
	host := tenantRegistry(t, "deferred-none-pw-5e21aa")
	tenant := tenantNamespace(t, c)
	config := credentialsFromEarlierUnit(t, c, tenant, host, "", false, "")
	for _, mode := range []string{"diff", "apply"} {
		o, s := c.runConfig(mode, "--config", config)
		r := unitsByName(s)["app"]
		if o.code != exitFail || r == nil || r.Reason != result.ReasonArtifactFailed || len(r.Entries) != 0 {
			t.Fatalf("%s: exit %d %+v\n%s", mode, o.code, r, o.stderr)
		}
		contains(t, mode+": app's message", r.Message, "OCIRepository "+tenant+"/app (clusters/local/units.yaml:14, oci://"+host+"/tenant/app at tag latest)",
			"spec.secretRef names Secret regcred, which is neither in the configuration's files nor in the cluster")
		if strings.Contains(r.Message, "turn") {
			t.Errorf("%s: deferred: %s", mode, r.Message)
		}
	}
}

// When the unit that creates a source's pull Secret fails, the unit of
// that source is skipped as every dependent is (DependencyNotReady): not
// failed for a missing Secret.
func TestConfigSourceSecretCreatorFails(t *testing.T) {
	c := newCLI(t)
	host := tenantRegistry(t, "deferred-fail-pw-0b77c3")
	tenant := tenantNamespace(t, c)
	// creds fails: an object of a kind the cluster does not serve.
	config := credentialsFromEarlierUnit(t, c, tenant, host, "deferred-fail-pw-0b77c3", true,
		"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: broken\n  namespace: "+tenant+"\n")
	o, s := c.runConfig("apply", "--config", config)
	if o.code != exitFail {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if r := unitsByName(s)["creds"]; r == nil || !r.Failed() {
		t.Fatalf("creds: %+v", r)
	}
	r := unitsByName(s)["app"]
	if r == nil || r.Reason != result.ReasonDependencyNotReady {
		t.Fatalf("app: %+v", r)
	}
	contains(t, "app's message", r.Message, "dependency creds of this run is not ready")
	if _, err := cluster.Client(t).CoreV1().Secrets(tenant).Get(t.Context(), "regcred", metav1.GetOptions{}); err == nil {
		t.Error("the failed unit applied its Secret")
	}
}

// d2-fleet's own shape: the tenants unit's ResourceSet generates, per
// tenant, a namespace, a pull Secret copied (copyFrom) from one the
// cluster holds, a ServiceAccount flux with that Secret in its
// imagePullSecrets, a copied flux-runtime-info ConfigMap, an
// OCIRepository pulling as flux and a Kustomization of it substituting
// from that ConfigMap. One apply from a cluster holding only the objects
// to copy deploys every tenant, with the copied values.
func TestConfigSourceAccountFromAResourceSet(t *testing.T) {
	c := newCLI(t)
	const password = "deferred-rset-pw-6a4f19"
	host := tenantRegistry(t, password)
	a, b := c.ns+"-a", c.ns+"-b"
	deleteNamespaces(t, a, b)
	if _, err := cluster.Client(t).CoreV1().Secrets(c.ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ghcr-auth"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{".dockerconfigjson": []byte(dockerConfig(host, "flux", password))}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "flux-runtime-info"},
		Data: map[string]string{"ENVIRONMENT": "staging"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "tenants/apps.yaml"), `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: apps
  namespace: `+c.ns+`
spec:
  inputs:
    - tenant: `+a+`
    - tenant: `+b+`
  resources:
    - apiVersion: v1
      kind: Namespace
      metadata:
        name: << inputs.tenant >>
    - apiVersion: v1
      kind: Secret
      metadata:
        name: ghcr-auth
        namespace: << inputs.tenant >>
        annotations:
          fluxcd.controlplane.io/copyFrom: "`+c.ns+`/ghcr-auth"
      type: kubernetes.io/dockerconfigjson
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: flux-runtime-info
        namespace: << inputs.tenant >>
        annotations:
          fluxcd.controlplane.io/copyFrom: "`+c.ns+`/flux-runtime-info"
    - apiVersion: v1
      kind: ServiceAccount
      metadata:
        name: flux
        namespace: << inputs.tenant >>
      imagePullSecrets:
        - name: ghcr-auth
    - apiVersion: source.toolkit.fluxcd.io/v1
      kind: OCIRepository
      metadata:
        name: apps
        namespace: << inputs.tenant >>
      spec:
        interval: 5m
        serviceAccountName: flux
        url: "oci://`+host+`/tenant/app"
        ref:
          tag: latest
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata:
        name: apps
        namespace: << inputs.tenant >>
      spec:
        targetNamespace: << inputs.tenant >>
        interval: 30m
        sourceRef:
          kind: OCIRepository
          name: apps
        path: ./deploy
        prune: true
        postBuild:
          substituteFrom:
            - kind: ConfigMap
              name: flux-runtime-info
`)
	writeFile(t, filepath.Join(repo, "clusters/local/tenants.yaml"), `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: tenants
  namespace: `+c.ns+`
spec:
  interval: 12h
  sourceRef:
    kind: GitRepository
    name: flux-system
  path: ./tenants
  prune: true
`)
	initRepo(t, repo, "git@github.com:acme/fleet.git")
	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/local"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	for _, tenant := range []string{a, b} {
		if r := unitsByName(s)[tenant+"-apps"]; r == nil || r.Reason != result.ReasonApplySucceed {
			t.Errorf("%s's unit: %+v (units: %v)", tenant, r, slices.Collect(maps.Keys(unitsByName(s))))
		}
		got, err := cluster.Client(t).CoreV1().ConfigMaps(tenant).Get(t.Context(), "app", metav1.GetOptions{})
		if err != nil || got.Data["from"] != "artifact" || got.Data["environment"] != "env-staging" {
			t.Errorf("%s: the artifact's ConfigMap, substituted from the copied flux-runtime-info: %v %v", tenant, err, got)
		}
	}
	if strings.Contains(o.stdout+o.stderr, password) {
		t.Errorf("the password shows:\n%s\n%s", o.stdout, o.stderr)
	}
}

// fluxKustomization is a Flux Kustomization name in ns building path of
// source (KIND/NAME), pruning, with extra spec lines (indented two
// spaces) before prune.
func fluxKustomization(name, ns, source, path, extra string) string {
	kind, src, _ := strings.Cut(source, "/")
	return fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: %s
  namespace: %s
spec:
  interval: 10m
  sourceRef:
    kind: %s
    name: %s
  path: %s
%s  prune: true
`, name, ns, kind, src, path, extra)
}
