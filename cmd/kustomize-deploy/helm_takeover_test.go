package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	helmkube "helm.sh/helm/v4/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
)

// A release the helm CLI installed is taken over in place when its
// HelmRelease is applied: the same objects (no delete, no recreate), the
// diff saying so, Helm's ownership annotations and field managers gone, so
// a field that only Helm set goes when Git no longer sets it. With
// --remove-helm-release-records, the release's records go once the unit
// applied; another release's, and look-alikes, stay.
func TestHelmReleaseTakesOverAHelmInstall(t *testing.T) {
	c := newCLI(t)
	chartDir := filepath.Join("..", "..", "testdata", "charts", "web")
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	kubeconfig, ns := cluster.Kubeconfig, c.ns
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, c.ns, "secret"); err != nil {
		t.Fatal(err)
	}
	helmkube.ManagedFieldsManager = "helm" // as the helm CLI names itself
	t.Cleanup(func() { helmkube.ManagedFieldsManager = "" })
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = "web", c.ns
	install.ServerSideApply = false // as Helm 3 and helm-controller write
	install.WaitStrategy = helmkube.HookOnlyStrategy
	if _, err := install.RunWithContext(t.Context(), ch, map[string]any{"password": "by-helm-only"}); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	before, err := cluster.Client(t).AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || before.Annotations["meta.helm.sh/release-name"] != "web" {
		t.Fatalf("the helm-installed Deployment: %v %v", err, before.Annotations)
	}

	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir, Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	chartUnit(t, dir, c.ns, repo.URL, "1.0.0", "    greeting: hello\n")
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir()}
	o := c.run(append([]string{"diff"}, args...)...)
	contains(t, "the diff", o.stdout, "Deployment/"+c.ns+"/web", "taken over from Helm release "+c.ns+"/web")

	// Another release's records, and a Secret merely labelled as one,
	// are never the unit's to remove.
	other := action.NewInstall(cfg)
	other.ReleaseName, other.Namespace, other.WaitStrategy, other.ServerSideApply = "other", c.ns, helmkube.HookOnlyStrategy, false
	otherCh, err := loader.Load(filepath.Join("..", "..", "testdata", "charts", "caps"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.RunWithContext(t.Context(), otherCh, nil); err != nil {
		t.Fatalf("helm install other: %v", err)
	}
	client := cluster.Client(t)
	lookalike := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-notes", Namespace: c.ns, Labels: map[string]string{"owner": "helm", "name": "web"}}}
	if _, err := client.CoreV1().Secrets(c.ns).Create(t.Context(), lookalike, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	records := func(release string) []string {
		t.Helper()
		list, err := client.CoreV1().Secrets(c.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + release})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		return names
	}

	o, r := c.apply(append(args, "--remove-helm-release-records")...)
	if o.code != exitOK {
		t.Fatalf("apply: exit %d, %s %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	if got := records("web"); !slices.Equal(got, []string{"web-notes"}) {
		t.Errorf("the records of release web after the takeover: %q (only Helm's record goes)", got)
	}
	if got := records("other"); !slices.Equal(got, []string{"sh.helm.release.v1.other.v1"}) {
		t.Errorf("the records of another release: %q", got)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool {
		return strings.Contains(n, "removed the records of Helm release "+c.ns+"/web: Secret/sh.helm.release.v1.web.v1")
	}) {
		t.Errorf("the result's notes do not say which records went: %q", r.Notes)
	}
	after, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || after.UID != before.UID {
		t.Fatalf("the Deployment was recreated, not taken over: %v", err)
	}
	if _, ok := after.Annotations["meta.helm.sh/release-name"]; ok {
		t.Errorf("Helm's ownership annotations stay: %v", after.Annotations)
	}
	for _, m := range after.ManagedFields {
		if m.Manager == "helm" {
			t.Errorf("Helm still manages fields of the Deployment: %+v", m)
		}
	}
	if env := after.Spec.Template.Spec.Containers[0].Env; len(env) != 0 {
		t.Errorf("the env var only Helm set is still there: %v", env)
	}
	// web-db, which Git no longer renders, stays Helm's: never the unit's,
	// never deleted by it.
	if _, err := client.CoreV1().Secrets(c.ns).Get(t.Context(), "web-db", metav1.GetOptions{}); err != nil {
		t.Errorf("an object of the Helm release the unit does not render: %v", err)
	}
}
