package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// accountRelease writes, in dir, a HelmRepository at url and a
// HelmRelease of the web chart in namespace ns naming account, with
// extra spec lines, after a ConfigMap of the unit's own.
func accountRelease(t *testing.T, dir, ns, url, account, extra string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+ns+
		"\nspec:\n  interval: 1h\n  url: "+url+"\n")
	writeFile(t, filepath.Join(dir, "app.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: "+ns+"\n---\n"+
		"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: "+ns+"\nspec:\n  interval: 10m\n  serviceAccountName: "+account+
		"\n  chart:\n    spec:\n      chart: web\n      version: \"1.0.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n"+extra)
}

// namespaceAdmin creates ServiceAccount ns/name bound to the ClusterRole
// admin in ns: an account that may write its own namespace only.
func namespaceAdmin(t *testing.T, k kubernetes.Interface, ns, name string) {
	t.Helper()
	if _, err := k.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}
	if _, err := k.RbacV1().RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func webRepository(t *testing.T) *helmtest.Repository {
	return helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
}

// A HelmRelease naming a service account that may only write its own
// namespace, whose chart renders into another (targetNamespace), is
// installed as that account, as helm-controller installs it, never with
// the unit's rights: applied as the caller (an admin), the dry-run as
// the account is refused by the API server before anything is written,
// the error naming the account; nothing of the unit is applied.
func TestHelmReleaseOfAnotherServiceAccountIsAppliedAsIt(t *testing.T) {
	c := newCLI(t)
	other := cluster.Namespace(t)
	k := cluster.Client(t)
	namespaceAdmin(t, k, c.ns, "deployer")
	dir := t.TempDir()
	accountRelease(t, dir, c.ns, webRepository(t).URL, "deployer", "  targetNamespace: "+other+"\n")
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir()}

	o, r := c.apply(args...)
	if o.code != exitFail || r.Reason != result.ReasonValidationFailed {
		t.Fatalf("applied as the caller: exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the API server's refusal", r.Message, "system:serviceaccount:"+c.ns+":deployer", "forbidden", other)
	contains(t, "the progress", o.stderr, "HelmRelease/"+c.ns+"/web: installed as system:serviceaccount:"+c.ns+":deployer")
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unit's ConfigMap was applied: %v", err)
	}
	deployments, err := k.AppsV1().Deployments(other).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(deployments.Items) > 0 {
		t.Errorf("the chart's Deployment was applied in %s: %v %v", other, err, deployments.Items)
	}
}

// The unit creating its release's account (Flux Operator's local-dev
// dev-team, a tenant's flux account): on the first apply the account
// does not exist, so the release's objects are dry-run as the unit and
// applied as the account once the unit's own objects (the account, its
// Role and RoleBinding) are; the inventory records them as the
// account's. Prune is the account's too: without the right to delete,
// the release's objects stay when it leaves, the error naming the
// account; given that right, they go.
func TestHelmReleaseOfAnAccountItsUnitCreates(t *testing.T) {
	c := newCLI(t)
	k := cluster.Client(t)
	dir := t.TempDir()
	rbac := func(verbs string) {
		writeFile(t, filepath.Join(dir, "rbac.yaml"), `apiVersion: v1
kind: ServiceAccount
metadata: {name: dev-team, namespace: `+c.ns+`}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: dev-team, namespace: `+c.ns+`}
rules:
- apiGroups: ["", apps]
  resources: [configmaps, services, deployments, replicasets, pods]
  verbs: [`+verbs+`]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dev-team, namespace: `+c.ns+`}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: dev-team}
subjects:
- {kind: ServiceAccount, name: dev-team, namespace: `+c.ns+`}
`)
	}
	rbac("get, list, watch, create, update, patch")
	accountRelease(t, dir, c.ns, webRepository(t).URL, "dev-team", "")
	args := []string{"--name", "dev", "--path", dir, "--chart-cache", t.TempDir()}

	// A pull request's diff, before the account exists: what the apply
	// will create, and the same note.
	o := c.run(append([]string{"diff"}, args...)...)
	if o.code != exitOK {
		t.Fatalf("diff before the first apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "the diff", o.stdout+o.stderr, "Deployment/"+c.ns+"/web", "gets its rights from this unit's own objects")

	o, r := c.apply(args...)
	if o.code != exitOK {
		t.Fatalf("first apply: exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the note", strings.Join(r.Notes, "\n"), "HelmRelease/"+c.ns+"/web: 3 object(s) dry-run as the caller's own credentials",
		"system:serviceaccount:"+c.ns+":dev-team gets its rights from this unit's own objects")
	if len(r.Releases) != 1 || r.Releases[0].InstalledAs != "system:serviceaccount:"+c.ns+":dev-team" {
		t.Errorf("the result's release: %+v", r.Releases)
	}
	wantActions(t, r, map[string]result.Action{
		"ServiceAccount/" + c.ns + "/dev-team": result.Created, "Deployment/" + c.ns + "/web": result.Created, "ConfigMap/" + c.ns + "/settings": result.Created,
	})
	if _, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("the chart's Deployment: %v", err)
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "dev")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range inv.Entries {
		want := ""
		if e.Name == "web" || strings.HasPrefix(e.Name, "web-") {
			want = c.ns + "/dev-team"
		}
		if e.Account != want || e.Cluster != "" {
			t.Errorf("%s recorded as applied as %q on %q, want %q", e.ID, e.Account, e.Cluster, want)
		}
	}

	// Again: as the account, whose rights now exist, nothing changes.
	if o, r := c.apply(args...); o.code != exitOK || r.Changed() {
		t.Fatalf("second apply: exit %d, counts %+v: %s\n%s", o.code, r.Counts, r.Message, o.stderr)
	}

	// The release leaves; its account may not delete.
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: "+c.ns+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, r = c.apply(args...)
	if o.code != exitFail || r.Reason != result.ReasonPruneFailed {
		t.Fatalf("prune as an account that may not delete: exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the prune's refusal", r.Message, "system:serviceaccount:"+c.ns+":dev-team", "cannot delete")
	if _, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("the chart's Deployment after a refused prune: %v", err)
	}

	rbac("get, list, watch, create, update, patch, delete")
	if o, r := c.apply(args...); o.code != exitOK || r.Counts.Deleted != 3 {
		t.Fatalf("prune as an account that may delete: exit %d, counts %+v: %s\n%s", o.code, r.Counts, r.Message, o.stderr)
	}
	if _, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's Deployment after its release left: %v", err)
	}
}

// A release's account that does not exist, and that its unit does not
// create, fails the unit before anything is applied, naming the account
// and the HelmRelease's file and line.
func TestHelmReleaseOfAMissingAccount(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	accountRelease(t, dir, c.ns, webRepository(t).URL, "ghost", "")
	o, r := c.apply("--name", "ghost", "--path", dir, "--chart-cache", t.TempDir())
	if o.code != exitFail || r.Reason != result.ReasonBuildFailed {
		t.Fatalf("exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the error", r.Message, "HelmRelease "+c.ns+"/web (app.yaml:7): spec.serviceAccountName: ServiceAccount "+c.ns+"/ghost does not exist, and this unit does not create it")
	if len(r.FileErrors) != 1 || r.FileErrors[0].File != "app.yaml" || r.FileErrors[0].Line != 7 {
		t.Errorf("annotated at %+v, want the HelmRelease at app.yaml:7", r.FileErrors)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unit's ConfigMap was applied: %v", err)
	}
}

// hubConfig writes a configuration of two Kustomizations of namespace
// ns: base (a ConfigMap) and, when withApps, apps: a ConfigMap of the
// hub and a HelmRelease of the web chart at url whose spec.kubeConfig
// names the Secret spoke (Flux's hub-and-spoke example), when
// withRelease.
func hubConfig(t *testing.T, repo, ns, url string, withApps, withRelease bool, extra ...string) {
	t.Helper()
	kustomization := func(name string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
			"\nspec:\n  interval: 10m\n  path: ./" + name + "\n  prune: true\n  wait: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n    namespace: flux-system\n"
	}
	units := kustomization("base")
	if withApps {
		units += "---\n" + kustomization("apps")
	}
	writeFile(t, filepath.Join(repo, "clusters/hub/units.yaml"), units)
	writeFile(t, filepath.Join(repo, "base/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\n  namespace: "+ns+"\n")
	resources := "resources: [hub.yaml]\n"
	if withRelease {
		resources = "resources: [hub.yaml, repository.yaml, release.yaml]\n"
	}
	writeFile(t, filepath.Join(repo, "apps/kustomization.yaml"), resources)
	writeFile(t, filepath.Join(repo, "apps/hub.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hub\n  namespace: "+ns+"\n")
	writeFile(t, filepath.Join(repo, "apps/repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+ns+
		"\nspec:\n  interval: 1h\n  url: "+url+"\n")
	writeFile(t, filepath.Join(repo, "apps/release.yaml"), "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: "+ns+
		"\nspec:\n  interval: 10m\n  kubeConfig:\n    secretRef:\n      name: spoke\n      key: value.yaml\n"+
		"  chart:\n    spec:\n      chart: web\n      version: \"1.0.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n"+strings.Join(extra, ""))
}

// A HelmRelease with spec.kubeConfig (Flux's hub-and-spoke example) is
// rendered and applied to the cluster its Secret stands for
// (--kubeconfig-secret), its unit's other objects to the unit's cluster;
// the unit's inventory, on its own cluster, records the release's
// objects as the spoke's. They are pruned there when the release
// leaves, and garbage-collected there with their unit when it leaves
// the configuration. Without a kubeconfig for the Secret, the unit
// fails before anything is applied, naming the HelmRelease's line. With
// a serviceAccountName, it is that account of the spoke that installs
// it, which must exist there.
func TestHelmReleaseWithAKubeConfig(t *testing.T) {
	c := newCLI(t)
	spoke, err := testcluster.Start(t.Context(), testcluster.Options{Nodes: 1})
	if err != nil {
		t.Fatalf("a second cluster did not start: %v", err)
	}
	t.Cleanup(spoke.Stop)
	k2, err := kubernetes.NewForConfig(spoke.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k2.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	k := cluster.Client(t)
	url := webRepository(t).URL
	repo := t.TempDir()
	hubConfig(t, repo, c.ns, url, true, true)
	gitInit(t, repo)
	cfg := filepath.Join(repo, "clusters/hub")
	args := []string{"apply", "--config", cfg, "--chart-cache", t.TempDir()}
	withSpoke := append(slices.Clone(args), "--kubeconfig-secret", "spoke="+spoke.Kubeconfig)
	onSpoke := func(name string) error {
		_, err := k2.AppsV1().Deployments(c.ns).Get(t.Context(), name, metav1.GetOptions{})
		return err
	}

	o, s := c.runConfig(args...)
	apps := unitsByName(s)["apps"]
	if o.code != exitFail || apps == nil || apps.Reason != result.ReasonBuildFailed {
		t.Fatalf("without the spoke's kubeconfig: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "the failure", apps.Message, "HelmRelease "+c.ns+"/web (apps/release.yaml:1): spec.kubeConfig names Secret spoke: give its kubeconfig with --kubeconfig-secret spoke=FILE")
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "hub", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unit's ConfigMap was applied: %v", err)
	}

	o, s = c.runConfig(withSpoke...)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("with the spoke's kubeconfig: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if err := onSpoke("web"); err != nil {
		t.Fatalf("the chart's Deployment on the spoke: %v", err)
	}
	if _, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's Deployment on the hub: %v", err)
	}
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "hub", metav1.GetOptions{}); err != nil {
		t.Errorf("the unit's ConfigMap on the hub: %v", err)
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "apps")
	if err != nil || inv == nil {
		t.Fatalf("the unit's inventory on the hub: %v", err)
	}
	spokes := 0
	for _, e := range inv.Entries {
		if e.Cluster == "spoke" {
			spokes++
		}
	}
	if spokes != 3 || len(inv.Entries) != 4 {
		t.Errorf("inventory %+v, want the chart's 3 objects on the spoke and the hub's ConfigMap", inv.Entries)
	}
	if o, s := c.runConfig(withSpoke...); o.code != exitOK || unitsByName(s)["apps"].Changed() {
		t.Errorf("again: exit %d, %+v\n%s", o.code, unitsByName(s)["apps"], o.stderr)
	}
	diff := c.run("diff", "--config", cfg, "--chart-cache", t.TempDir(), "--kubeconfig-secret", "spoke="+spoke.Kubeconfig)
	contains(t, "the diff's text", diff.stdout, "release HelmRelease/"+c.ns+"/web: chart web 1.0.0", "installed as the kubeconfig's own credentials on the cluster of kubeConfig Secret spoke")

	// The release leaves: pruned on the spoke.
	hubConfig(t, repo, c.ns, url, true, false)
	gitOut(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "no release")
	if o, s := c.runConfig(withSpoke...); o.code != exitOK || unitsByName(s)["apps"].Counts.Deleted != 3 {
		t.Fatalf("without the release: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if err := onSpoke("web"); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's Deployment on the spoke after its release left: %v", err)
	}

	// Back, then the whole unit leaves the configuration: collected on
	// the spoke too.
	hubConfig(t, repo, c.ns, url, true, true)
	gitOut(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "release again")
	if o, _ := c.runConfig(withSpoke...); o.code != exitOK || onSpoke("web") != nil {
		t.Fatalf("the release again: exit %d\n%s", o.code, o.stderr)
	}
	hubConfig(t, repo, c.ns, url, false, false)
	gitOut(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "no apps")
	if o, _ := c.runConfig(withSpoke...); o.code != exitOK {
		t.Fatalf("without the apps unit: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if err := onSpoke("web"); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's Deployment on the spoke after its unit left: %v", err)
	}
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "hub", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unit's ConfigMap on the hub after its unit left: %v", err)
	}

	// As an account of the spoke: one that does not exist there is named;
	// once it does, the release is applied as it, there.
	hubConfig(t, repo, c.ns, url, true, true, "  serviceAccountName: deployer\n")
	gitOut(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", "as deployer")
	o, s = c.runConfig(withSpoke...)
	if apps := unitsByName(s)["apps"]; o.code != exitFail || apps == nil || apps.Reason != result.ReasonBuildFailed {
		t.Fatalf("as an account missing on the spoke: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "the failure", unitsByName(s)["apps"].Message,
		"ServiceAccount "+c.ns+"/deployer does not exist on the cluster of kubeConfig Secret spoke, and this unit does not create it")
	namespaceAdmin(t, k2, c.ns, "deployer")
	o, s = c.runConfig(withSpoke...)
	if o.code != exitOK {
		t.Fatalf("as an account of the spoke: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if got := unitsByName(s)["apps"].Releases; len(got) != 1 || got[0].InstalledAs != "system:serviceaccount:"+c.ns+":deployer on the cluster of kubeConfig Secret spoke" {
		t.Errorf("the release: %+v", got)
	}
	if err := onSpoke("web"); err != nil {
		t.Fatalf("the chart's Deployment on the spoke: %v", err)
	}
	if inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "apps"); err != nil || !slices.ContainsFunc(inv.Entries, func(e inventory.Entry) bool {
		return e.Name == "web" && e.Kind == "Deployment" && e.Cluster == "spoke" && e.Account == c.ns+"/deployer"
	}) {
		t.Errorf("the inventory does not record the Deployment as the spoke's deployer's: %v %+v", err, inv)
	}
}

// A release's hooks are checked and run as its account too: an account
// that may write the chart's ConfigMaps but not its hook's Job fails
// the unit before anything is written, naming the account and the hook;
// allowed Jobs, the hooks run and the release installs.
func TestHelmReleaseHooksRunAsItsAccount(t *testing.T) {
	c := newCLI(t)
	k := cluster.Client(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "hooked"), Version: "0.1.0"})
	if _, err := k.CoreV1().ServiceAccounts(c.ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	}
	if _, err := k.RbacV1().Roles(c.ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: c.ns}},
	}
	if _, err := k.RbacV1().RoleBindings(c.ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hookedUnit(t, dir, c.ns, repo.URL, "    schema: \"1\"\n")
	release := filepath.Join(dir, "release.yaml")
	data, err := os.ReadFile(release)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, release, strings.Replace(string(data), "  timeout: 2m\n", "  timeout: 2m\n  serviceAccountName: deployer\n", 1))
	args := []string{"--name", "hooked", "--path", dir, "--chart-cache", t.TempDir()}

	o, r := c.apply(args...)
	if o.code != exitFail || r.Reason != result.ReasonValidationFailed {
		t.Fatalf("an account that may not create Jobs: exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the hook's refusal", r.Message, "hook Job/"+c.ns+"/web-migrate", "system:serviceaccount:"+c.ns+":deployer", "jobs")
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "web-settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's ConfigMap was written: %v", err)
	}

	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}})
	if _, err := k.RbacV1().Roles(c.ns).Update(t.Context(), role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if o, r := c.apply(args...); o.code != exitOK {
		t.Fatalf("an account that may create Jobs: exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	if _, err := k.BatchV1().Jobs(c.ns).Get(t.Context(), "web-migrate", metav1.GetOptions{}); err != nil {
		t.Errorf("the pre-install hook's Job: %v", err)
	}
}

// An account the unit creates, with too few rights: its objects were
// dry-run as the unit (the account did not exist yet), and the apply, as
// the account, is refused by the API server, the error naming it; the
// chart's Deployment is not written. The unit's own objects, applied
// first as the account needs them, stay, as helm-controller's failed
// install leaves the Kustomization's objects applied.
func TestHelmReleaseOfAnAccountItsUnitCreatesWithTooFewRights(t *testing.T) {
	c := newCLI(t)
	k := cluster.Client(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rbac.yaml"), `apiVersion: v1
kind: ServiceAccount
metadata: {name: dev-team, namespace: `+c.ns+`}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: dev-team, namespace: `+c.ns+`}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dev-team, namespace: `+c.ns+`}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: dev-team}
subjects:
- {kind: ServiceAccount, name: dev-team, namespace: `+c.ns+`}
`)
	accountRelease(t, dir, c.ns, webRepository(t).URL, "dev-team", "")
	o, r := c.apply("--name", "dev", "--path", dir, "--chart-cache", t.TempDir())
	if o.code != exitFail || r.Reason != result.ReasonApplyFailed {
		t.Fatalf("exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the refusal", r.Message, "system:serviceaccount:"+c.ns+":dev-team", "forbidden")
	if _, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's Deployment was written: %v", err)
	}
	if _, err := k.CoreV1().ServiceAccounts(c.ns).Get(t.Context(), "dev-team", metav1.GetOptions{}); err != nil {
		t.Errorf("the unit's own ServiceAccount: %v", err)
	}
}

// The wait for a release's objects is its account's too: an account the
// unit creates that may create and patch the chart's objects but not
// read them gets them applied, and the wait, as that account, fails,
// naming it.
func TestHelmReleaseIsWaitedForAsItsAccount(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rbac.yaml"), `apiVersion: v1
kind: ServiceAccount
metadata: {name: writer, namespace: `+c.ns+`}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: writer, namespace: `+c.ns+`}
rules:
- apiGroups: ["", apps]
  resources: [configmaps, services, deployments]
  verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: writer, namespace: `+c.ns+`}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: writer}
subjects:
- {kind: ServiceAccount, name: writer, namespace: `+c.ns+`}
`)
	accountRelease(t, dir, c.ns, webRepository(t).URL, "writer", "")
	o, r := c.apply("--timeout", "10s", "--name", "writer", "--path", dir, "--chart-cache", t.TempDir())
	if o.code != exitFail || r.Reason != result.ReasonHealthCheckFailed {
		t.Fatalf("exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the failed wait", r.Message, "system:serviceaccount:"+c.ns+":writer", "cannot list resource \"deployments\"")
	if _, err := cluster.Client(t).AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil {
		t.Errorf("the chart's Deployment was not applied: %v", err)
	}
}
