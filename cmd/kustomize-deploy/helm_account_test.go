package main

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A HelmRelease naming a service account that may only write its own
// namespace, whose chart renders into another (targetNamespace), is
// never applied with more rights than that account's. Applied as the
// caller (an admin), the unit is refused before anything is applied,
// the error naming the release, its file and line, the field, both
// identities and the way out; applied as that account, the release is
// the unit's, and the API server refuses the write outside: nothing of
// the unit is applied either way.
func TestHelmReleaseOfAnotherServiceAccountIsRefused(t *testing.T) {
	c := newCLI(t)
	other := cluster.Namespace(t)
	k := cluster.Client(t)
	if _, err := k.CoreV1().ServiceAccounts(c.ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: c.ns}},
	}
	if _, err := k.RbacV1().RoleBindings(c.ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+c.ns+
		"\nspec:\n  interval: 1h\n  url: "+repo.URL+"\n")
	writeFile(t, filepath.Join(dir, "app.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: "+c.ns+"\n---\n"+
		"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: "+c.ns+"\nspec:\n  interval: 10m\n  serviceAccountName: deployer\n  targetNamespace: "+other+
		"\n  chart:\n    spec:\n      chart: web\n      version: \"1.0.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n")
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir()}
	nothingApplied := func(run string) {
		t.Helper()
		if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the unit's ConfigMap was applied: %v", run, err)
		}
		deployments, err := k.AppsV1().Deployments(other).List(t.Context(), metav1.ListOptions{})
		if err != nil || len(deployments.Items) > 0 {
			t.Errorf("%s: the chart's Deployment was applied in %s: %v %v", run, other, err, deployments.Items)
		}
		settings, err := k.CoreV1().ConfigMaps(other).List(t.Context(), metav1.ListOptions{LabelSelector: "helm.sh/chart"})
		if err != nil || len(settings.Items) > 0 {
			t.Errorf("%s: the chart's ConfigMap was applied in %s: %v %v", run, other, err, settings.Items)
		}
	}

	o, r := c.apply(args...)
	if o.code != exitFail || r.Reason != result.ReasonBuildFailed {
		t.Fatalf("applied as the caller: exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the refusal", r.Message,
		"HelmRelease "+c.ns+"/web (", "app.yaml:7): spec.serviceAccountName deployer:",
		"installs the release as system:serviceaccount:"+c.ns+":deployer",
		"this unit applies as the caller's own credentials (no service account)",
		"run it with service-account deployer and inventory-namespace "+c.ns)
	if len(r.FileErrors) != 1 || r.FileErrors[0].File != "app.yaml" || r.FileErrors[0].Line != 7 {
		t.Errorf("annotated at %+v, want the HelmRelease at app.yaml:7", r.FileErrors)
	}
	if strings.Contains(o.stderr, "chart web 1.0.0") {
		t.Errorf("the refused release was rendered:\n%s", o.stderr)
	}
	nothingApplied("as the caller")

	o, r = c.apply(append(args, "--service-account", "deployer")...)
	if o.code != exitFail || r.Ready {
		t.Fatalf("applied as the release's account, writing outside its namespace: exit %d, %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the API server's refusal", r.Message, "system:serviceaccount:"+c.ns+":deployer", "forbidden", other)
	nothingApplied("as the release's account")
}
