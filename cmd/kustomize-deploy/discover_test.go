package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/gittest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// homeOps writes a repository laid out as the common "home-ops" template
// is: a root Kustomization (kubernetes/flux/cluster/ks.yaml) applies
// kubernetes/apps, whose kustomization.yaml reaches every app's ks.yaml
// through each namespace directory's kustomization.yaml; the root patches
// every app Kustomization to substitute from the cluster-settings
// ConfigMap; each app has postBuild.substitute and a component, and the
// first app of each group depends on the one before it. It returns the
// repository and the root Kustomization's file.
func homeOps(t *testing.T, ns string, groups, appsPerGroup int) (repo, root string) {
	t.Helper()
	repo = t.TempDir()
	w := func(p, content string) { writeFile(t, filepath.Join(repo, p), content) }
	w("kubernetes/flux/cluster/ks.yaml", `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: cluster-apps
  namespace: `+ns+`
spec:
  interval: 1h
  path: ./kubernetes/apps
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
  postBuild:
    substituteFrom:
    - kind: ConfigMap
      name: cluster-settings
  patches:
  - patch: |-
      apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata:
        name: _
      spec:
        postBuild:
          substituteFrom:
          - kind: ConfigMap
            name: cluster-settings
    target:
      group: kustomize.toolkit.fluxcd.io
      kind: Kustomization
`)
	w("kubernetes/flux/cluster/cluster-settings.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-settings
  namespace: `+ns+`
data:
  CLUSTER_NAME: home
  TIMEZONE: Europe/Paris
`)
	w("kubernetes/components/common/kustomization.yaml", `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
labels:
- pairs:
    home-ops/managed: "true"
`)
	var groupDirs []string
	for g := range groups {
		group := fmt.Sprintf("group-%d", g)
		groupDirs = append(groupDirs, "./"+group)
		var ks []string
		for a := range appsPerGroup {
			app := fmt.Sprintf("app-%d-%d", g, a)
			ks = append(ks, "./"+app+"/ks.yaml")
			deps := ""
			if a > 0 {
				deps = fmt.Sprintf("  dependsOn:\n  - name: app-%d-%d\n", g, a-1)
			}
			w(filepath.Join("kubernetes/apps", group, app, "ks.yaml"), `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: `+app+`
spec:
`+deps+`  interval: 1h
  path: ./kubernetes/apps/`+group+`/`+app+`/app
  prune: true
  wait: false
  targetNamespace: `+ns+`
  components:
  - ../../../../components/common
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
  postBuild:
    substitute:
      APP: `+app+`
`)
			w(filepath.Join("kubernetes/apps", group, app, "app/kustomization.yaml"), "resources:\n- configmap.yaml\n")
			w(filepath.Join("kubernetes/apps", group, app, "app/configmap.yaml"), `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${APP}
data:
  cluster: ${CLUSTER_NAME}
  tz: ${TIMEZONE:=UTC}
`)
		}
		w(filepath.Join("kubernetes/apps", group, "kustomization.yaml"), "namespace: "+ns+"\nresources:\n- "+strings.Join(ks, "\n- ")+"\n")
	}
	w("kubernetes/apps/kustomization.yaml", "resources:\n- "+strings.Join(groupDirs, "\n- ")+"\n")
	gitInit(t, repo)
	return repo, filepath.Join(repo, "kubernetes/flux/cluster")
}

// gitInit makes dir a repository of one commit.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "fleet"}} {
		gitOut(t, dir, args...)
	}
}

// Kustomizations reached by building (home-ops: a root Kustomization, 30
// app Kustomizations through kustomization.yaml resources) run as units of
// one run: each app's own postBuild and component, the substitution the
// root's patch gives it, dependency order kept, each after the root that
// emitted it; the root applies none of them as objects. A second run
// writes nothing.
func TestConfigFindsKustomizationsByBuilding(t *testing.T) {
	c := newCLI(t)
	const groups, perGroup = 3, 10
	repo, root := homeOps(t, c.ns, groups, perGroup)
	o, s := c.runConfig("apply", "--config", root)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	if len(got) != 1+groups*perGroup {
		t.Fatalf("%d units, want the root and %d apps: %v", len(got), groups*perGroup, names(s))
	}
	rootRes := got["cluster-apps"]
	if rootRes == nil || rootRes.Reason != result.ReasonApplySucceed {
		t.Fatalf("root: %+v", rootRes)
	}
	// Each unit is built once: the root's build that found the apps is
	// the one it applies.
	if s.Builds != len(got) {
		t.Errorf("%d builds for %d units", s.Builds, len(got))
	}
	for _, e := range rootRes.Entries {
		if e.Object.Kind == "Kustomization" {
			t.Errorf("the root applied %s as an object", e.Object)
		}
	}
	contains(t, "root's notes", strings.Join(rootRes.Notes, "\n"), "run as a unit of this run, not applied")
	k := cluster.Client(t)
	for g := range groups {
		for a := range perGroup {
			app := fmt.Sprintf("app-%d-%d", g, a)
			r := got[app]
			if r == nil || r.Reason != result.ReasonApplySucceed {
				t.Errorf("unit %s: %+v", app, r)
				continue
			}
			if !r.StartedAt.After(rootRes.StartedAt) {
				t.Errorf("%s started before the root that emitted it", app)
			}
			if a > 0 {
				dep := got[fmt.Sprintf("app-%d-%d", g, a-1)]
				if d, err := time.ParseDuration(dep.Duration); err == nil && r.StartedAt.Before(dep.StartedAt.Add(d)) {
					t.Errorf("%s started before %s, which it depends on, was done", app, dep.Unit)
				}
			}
			cm, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), app, metav1.GetOptions{})
			if err != nil {
				t.Errorf("%s: %v", app, err)
				continue
			}
			if cm.Data["cluster"] != "home" || cm.Data["tz"] != "Europe/Paris" || cm.Labels["home-ops/managed"] != "true" {
				t.Errorf("%s: substitution from the root's patch or the component missing: %v %v", app, cm.Data, cm.Labels)
			}
		}
	}
	// Nothing to do at the same revision: no unit takes its lock or
	// records anything.
	writes := writesDuring(t, c.ns, func() {
		o, s = c.runConfig("apply", "--config", root)
	})
	if o.code != exitOK {
		t.Fatalf("second run: exit %d\n%s", o.code, o.stderr)
	}
	for _, r := range s.Units {
		if r.Changed() || !r.Ready {
			t.Errorf("second run: %s changed or not ready: %s %s", r.Unit, r.Reason, r.Message)
		}
	}
	if len(writes) > 0 {
		t.Errorf("second run wrote %d time(s): %v\n%s", len(writes), writes, o.stderr)
	}
	if s.Builds != 1 { // the root, to find the apps; none of them is built
		t.Errorf("second run: %d builds, want the root's alone", s.Builds)
	}

	// An app's ks.yaml removed from kubernetes/apps: its unit leaves the
	// configuration and is collected, as one that left a file would be.
	gone := filepath.Join(repo, "kubernetes/apps/group-0/kustomization.yaml")
	data, _ := os.ReadFile(gone)
	writeFile(t, gone, strings.Replace(string(data), "- ./app-0-9/ks.yaml\n", "", 1))
	o, s = c.runConfig("apply", "--config", root)
	if o.code != exitOK || unitsByName(s)["app-0-9"] == nil || unitsByName(s)["app-0-9"].Mode != result.ModeDelete {
		t.Fatalf("app-0-9 not collected: exit %d %v\n%s", o.code, names(s), o.stderr)
	}
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "app-0-9", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("app-0-9's ConfigMap: %v", err)
	}
}

func names(s *result.Set) []string {
	var out []string
	for _, r := range s.Units {
		out = append(out, r.Unit)
	}
	return out
}

// Flux's bootstrap layout given as its root file (gotk-sync.yaml): the
// flux-system Kustomization runs, its build emits the other
// Kustomizations, which run as they do from the directory, itself (not
// run again) and Flux's controllers (not installed).
func TestConfigRootKustomizationFile(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, c.ns)
	writeFile(t, filepath.Join(repo, "clusters/local/flux-system/gotk-components.yaml"), `apiVersion: v1
kind: Namespace
metadata:
  name: flux-system
  labels:
    app.kubernetes.io/part-of: flux
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: kustomize-controller
  namespace: flux-system
  labels:
    app.kubernetes.io/part-of: flux
`)
	writeFile(t, filepath.Join(repo, "clusters/local/flux-system/kustomization.yaml"), "resources:\n- gotk-components.yaml\n- gotk-sync.yaml\n")
	gitOut(t, repo, "add", "-A")
	gitOut(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "components")
	o, s := c.runConfig("apply", "--verbose", "--config", filepath.Join(repo, "clusters/local/flux-system/gotk-sync.yaml"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	for _, name := range []string{"flux-system", "istio", "webapp-common", "webapp-backend", "webapp-frontend", "monitoring"} {
		if r := got[name]; r == nil || r.Reason != result.ReasonApplySucceed {
			t.Errorf("unit %s: %+v", name, r)
		}
	}
	notes := strings.Join(got["flux-system"].Notes, "\n")
	contains(t, "flux-system's notes", notes, "ServiceAccount/flux-system/kustomize-controller", "not installed", "GitRepository/flux-system/flux-system", "not applied")
	contains(t, "notes", o.stderr, "is not run again")
	if _, err := cluster.Client(t).CoreV1().ServiceAccounts("flux-system").Get(t.Context(), "kustomize-controller", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Flux's controllers were installed: %v", err)
	}
}

// plan works over the Kustomizations found by building: the apps a root
// emits are in its group (each depends on the root), with no cluster.
func TestPlanCoversKustomizationsFoundByBuilding(t *testing.T) {
	c := newCLI(t)
	repo, root := homeOps(t, c.ns, 2, 2)
	o := c.run("plan", "--config", root, "-o", "json")
	if o.code != exitOK {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	want := `{"include":[{"name":"cluster-apps","units":"cluster-apps,app-0-0,app-0-1,app-1-0,app-1-1"}]}`
	if strings.TrimSpace(o.stdout) != want {
		t.Errorf("plan:\n%s\nwant\n%s", o.stdout, want)
	}

	// --by config over the directory of configurations (kubernetes/flux,
	// one subdirectory: cluster) lists the apps too.
	o = c.run("plan", "--config", filepath.Dir(root), "--by", "config", "-o", "json")
	if o.code != exitOK {
		t.Fatalf("--by config: exit %d\n%s", o.code, o.stderr)
	}
	want = `{"include":[{"name":"cluster","units":"cluster-apps,app-0-0,app-0-1,app-1-0,app-1-1","config":"kubernetes/flux/cluster"}]}`
	if strings.TrimSpace(o.stdout) != want {
		t.Errorf("plan --by config:\n%s\nwant\n%s", o.stdout, want)
	}

	// An app's ks.yaml with a path that is not there fails the plan, as
	// the apply would fail.
	ks := filepath.Join(repo, "kubernetes/apps/group-1/app-1-1/ks.yaml")
	data, err := os.ReadFile(ks)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, ks, strings.Replace(string(data), "path: ./kubernetes/apps/group-1/app-1-1/app", "path: ./kubernetes/apps/group-1/app-1-1/nowhere", 1))
	o = c.run("plan", "--config", filepath.Dir(root), "--by", "config", "-o", "json")
	if o.code == exitOK || !strings.Contains(o.stderr, "app-1-1") || !strings.Contains(o.stderr, "nowhere") {
		t.Errorf("--by config with a missing path: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
}

// tenants writes a flux2-multi-tenancy-like layout: a tenants
// Kustomization applies, per tenant, a Namespace, a ServiceAccount with
// admin rights in it, the tenant's GitRepository and a Kustomization of
// it run as that ServiceAccount. Each tenant's repository is served by
// srv, on branch master, and holds a HelmRelease of a chart served by
// a chart repository of the test; team-b's also writes into the
// platform's namespace. It returns the platform repository and each
// tenant's commit.
func tenants(t *testing.T, srv *gittest.Server, platformNS string, names ...string) (repo string, commits map[string]string) {
	t.Helper()
	charts := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	repo = t.TempDir()
	commits = map[string]string{}
	writeFile(t, filepath.Join(repo, "clusters/local/tenants.yaml"), `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: tenants
  namespace: `+platformNS+`
spec:
  interval: 10m
  path: ./tenants
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
`)
	var dirs []string
	for _, name := range names {
		ns := platformNS + "-" + name
		dirs = append(dirs, "./"+name)
		writeFile(t, filepath.Join(repo, "tenants", name, "rbac.yaml"), `apiVersion: v1
kind: Namespace
metadata:
  name: `+ns+`
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: `+name+`
  namespace: `+ns+`
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: `+name+`-reconciler
  namespace: `+ns+`
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: admin
subjects:
- kind: ServiceAccount
  name: `+name+`
  namespace: `+ns+`
`)
		writeFile(t, filepath.Join(repo, "tenants", name, "sync.yaml"), `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: `+name+`
  namespace: `+ns+`
spec:
  interval: 1m
  url: `+srv.URL+"/"+name+`
  ref:
    branch: master
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: `+name+`
  namespace: `+ns+`
spec:
  interval: 5m
  serviceAccountName: `+name+`
  path: ./
  prune: true
  sourceRef:
    kind: GitRepository
    name: `+name+`
`)
		writeFile(t, filepath.Join(repo, "tenants", name, "kustomization.yaml"), "resources:\n- rbac.yaml\n- sync.yaml\n")
		files := map[string]string{
			"app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "-app\n  namespace: " + ns + "\n",
			// As the example tenant's repository deploys podinfo (its
			// dev-team branch), with the API versions it still has.
			"podinfo-repository.yaml": "apiVersion: source.toolkit.fluxcd.io/v1beta1\nkind: HelmRepository\nmetadata:\n  name: podinfo\n  namespace: " + ns +
				"\nspec:\n  interval: 5m\n  url: " + charts.URL + "\n",
			"podinfo-release.yaml": "apiVersion: helm.toolkit.fluxcd.io/v2beta1\nkind: HelmRelease\nmetadata:\n  name: podinfo\n  namespace: " + ns +
				"\nspec:\n  serviceAccountName: " + name + "\n  releaseName: podinfo\n  chart:\n    spec:\n      chart: web\n      version: \">=1.0.0\"\n" +
				"      sourceRef:\n        kind: HelmRepository\n        name: podinfo\n  interval: 5m\n  values:\n    replicas: 2\n",
		}
		if name == "team-b" {
			files["outside.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "-outside\n  namespace: " + platformNS + "\n"
		}
		commits[name] = srv.Repo(name).Commit("apps", files)
	}
	writeFile(t, filepath.Join(repo, "tenants/kustomization.yaml"), "resources:\n- "+strings.Join(dirs, "\n- ")+"\n")
	gitInit(t, repo)
	k := cluster.Client(t)
	t.Cleanup(func() {
		for _, name := range names {
			_ = k.CoreV1().Namespaces().Delete(context.Background(), platformNS+"-"+name, metav1.DeleteOptions{})
		}
	})
	return repo, commits
}

// flux2-multi-tenancy's layout runs with no Flux: the tenants unit applies
// each tenant's namespace and service account, its GitRepository and
// Kustomization are not applied but read, and each tenant's Kustomization
// runs as a unit after it, from the tenant's repository (fetched from a
// Git server of the test), as the tenant's service account: team-a's
// objects, its HelmRelease's chart among them, land in its namespace; team-b, which
// also writes outside its namespace, is refused by the API server and
// applies nothing.
func TestConfigMultiTenancy(t *testing.T) {
	c := newCLI(t)
	srv := gittest.NewServer(t)
	repo, commits := tenants(t, srv, c.ns, "team-a", "team-b")
	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/local"))
	if o.code != exitFail || s.Ready {
		t.Fatalf("team-b writing outside its namespace was not refused: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	if r := got["tenants"]; r == nil || r.Reason != result.ReasonApplySucceed {
		t.Fatalf("tenants: %+v", r)
	}
	for _, e := range got["tenants"].Entries {
		if e.Object.Kind == "Kustomization" || e.Object.Kind == "GitRepository" {
			t.Errorf("the tenants unit applied %s", e.Object)
		}
	}
	if r := got["team-a"]; r == nil || r.Reason != result.ReasonApplySucceed || r.Revision != "master@sha1:"+commits["team-a"] {
		t.Errorf("team-a, from its own repository at its revision: %+v", r)
	}
	b := got["team-b"]
	if b == nil || b.Ready {
		t.Fatalf("team-b: %+v", b)
	}
	contains(t, "team-b's failure", b.Message, "system:serviceaccount:"+c.ns+"-team-b:team-b", "forbidden")
	k := cluster.Client(t)
	if _, err := k.CoreV1().ConfigMaps(c.ns+"-team-a").Get(t.Context(), "team-a-app", metav1.GetOptions{}); err != nil {
		t.Errorf("team-a's object: %v", err)
	}
	if podinfo, err := k.AppsV1().Deployments(c.ns+"-team-a").Get(t.Context(), "podinfo", metav1.GetOptions{}); err != nil || *podinfo.Spec.Replicas != 2 {
		t.Errorf("team-a's HelmRelease, rendered here and applied as team-a: %v %v", err, podinfo)
	}
	for _, e := range got["team-a"].Entries {
		if e.Object.Kind == "HelmRelease" || e.Object.Kind == "HelmRepository" {
			t.Errorf("team-a applied %s", e.Object)
		}
	}
	if _, err := k.AppsV1().Deployments(c.ns+"-team-b").Get(t.Context(), "podinfo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("team-b's release was applied although its unit failed: %v", err)
	}
	for _, ns := range []string{c.ns + "-team-b", c.ns} {
		list, err := k.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, "team-b") {
				t.Errorf("team-b applied %s/%s although its unit failed", ns, cm.Name)
			}
		}
	}
}

// Thirteen apps that substitute from a Secret missing from the cluster,
// each of which may emit Flux objects (a source beside its app), could
// not be built to find them: one warning for the cause, with the count,
// not thirteen.
func TestConfigGroupsWarningsByCause(t *testing.T) {
	c := newCLI(t)
	repo, root := homeOps(t, c.ns, 1, 13)
	ks := filepath.Join(root, "ks.yaml")
	data, _ := os.ReadFile(ks)
	writeFile(t, ks, strings.Replace(string(data), "          - kind: ConfigMap\n            name: cluster-settings\n",
		"          - kind: ConfigMap\n            name: cluster-settings\n          - kind: Secret\n            name: cluster-secrets\n", 1))
	for a := range 13 {
		app := filepath.Join(repo, "kubernetes/apps/group-0", fmt.Sprintf("app-0-%d", a), "app")
		writeFile(t, filepath.Join(app, "source.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata:\n  name: chart\nspec:\n  url: oci://127.0.0.1:1/chart\n")
		writeFile(t, filepath.Join(app, "kustomization.yaml"), "resources:\n- configmap.yaml\n- source.yaml\n")
	}
	gitOut(t, repo, "add", "-A")
	gitOut(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "secrets")
	o := c.run("diff", "--config", root)
	var warnings []string
	for _, line := range strings.Split(o.stderr, "\n") {
		if strings.HasPrefix(line, "warning: ") {
			warnings = append(warnings, line)
		}
	}
	// One line for the cause, one for what it means for garbage
	// collection.
	if len(warnings) != 2 {
		t.Fatalf("%d warnings, want two:\n%s", len(warnings), strings.Join(warnings, "\n"))
	}
	contains(t, "the cause", warnings[0], "13 units (app-0-0, app-0-1, app-0-2 and 10 more) could not be built", "postBuild.substituteFrom Secret "+c.ns+"/cluster-secrets: neither in the configuration's files nor in the cluster")
	contains(t, "garbage collection", warnings[1], "no unit is garbage-collected: 13 unit(s) (app-0-0, app-0-1, app-0-2 and 10 more) could not be built")
}
