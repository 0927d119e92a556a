package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A first deploy sends what it needs and no more: the wait lists only the
// kinds whose readiness a controller reports (the Deployment), not the
// Namespace and the Service the apply's answers showed ready, and a unit
// without HelmReleases never asks for the cluster's capabilities (its
// version and API groups again). The Deployment is still rolled out when
// the run returns.
func TestFirstDeployWaitsOnlyForWhatIsNotReadyAsApplied(t *testing.T) {
	c := newCLI(t)
	ns := c.ns + "-first"
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "namespace.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n")
	writeFile(t, filepath.Join(dir, "settings.yaml"), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: %s\ndata:\n  mode: fast\n", ns))
	writeFile(t, filepath.Join(dir, "service.yaml"), fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: %s\nspec:\n  selector:\n    app: web\n  ports:\n  - port: 80\n", ns))
	writeFile(t, filepath.Join(dir, "deployment.yaml"), webDeployment(ns, ""))
	t.Cleanup(func() {
		_ = cluster.Client(t).CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})

	r, n := c.countedApply("--name", "first", "--path", dir)
	wantActions(t, r, map[string]result.Action{
		"Namespace/" + ns:               result.Created,
		"ConfigMap/" + ns + "/settings": result.Created,
		"Service/" + ns + "/web":        result.Created,
		"Deployment/" + ns + "/web":     result.Created,
	})
	d, err := cluster.Client(t).AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ReadyReplicas != 1 {
		t.Errorf("apply returned before the rollout: %d/1 ready", d.Status.ReadyReplicas)
	}
	// One GET of the Namespace (its dry-run), no LIST of it or of
	// Services; one /version (the first contact), none for capabilities.
	got := map[string]int{}
	for _, key := range []string{"GET namespaces", "GET services", "GET version", "GET deployments.apps"} {
		got[key] = n.ByResource[key]
	}
	want := map[string]int{"GET namespaces": 1, "GET services": 0, "GET version": 1, "GET deployments.apps": got["GET deployments.apps"]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s\nall: %v", diff, n.ByResource)
	}
	if got["GET deployments.apps"] == 0 {
		t.Errorf("the Deployment was not waited for: %v", n.ByResource)
	}
}

// A Deployment's rollout starts while the unit's other objects are still
// being written: the ConfigMaps nothing names are sent after it, not
// before it as ssa's kind order lists them, and the ConfigMap its pods
// mount keeps its place before it. The order shows in the cluster: our
// API server's resourceVersions are etcd's revisions, so a ConfigMap's
// (never updated) is the revision it was created at, compared here with
// the one the Deployment was created at, seen by a watch.
func TestFirstDeployStartsRolloutsEarly(t *testing.T) {
	c := newCLI(t)
	ns := c.ns + "-early"
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "namespace.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n")
	const unnamed = 40
	var cms strings.Builder
	for i := range unnamed {
		fmt.Fprintf(&cms, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: data-%02d\n  namespace: %s\ndata:\n  n: %q\n", i, ns, fmt.Sprint(i))
	}
	fmt.Fprintf(&cms, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: %s\ndata:\n  mode: fast\n", ns)
	writeFile(t, filepath.Join(dir, "configmaps.yaml"), cms.String())
	writeFile(t, filepath.Join(dir, "deployment.yaml"), webDeployment(ns, `        volumeMounts:
        - {name: settings, mountPath: /etc/web}
      volumes:
      - name: settings
        configMap: {name: settings}
`))
	t.Cleanup(func() {
		_ = cluster.Client(t).CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	kc := cluster.Client(t)
	w, err := kc.AppsV1().Deployments(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	_, r := c.apply("--name", "early", "--path", dir)
	if r == nil || r.Failed() {
		t.Fatalf("apply failed: %+v", r)
	}
	var created int64
	for ev := range w.ResultChan() {
		if d, ok := ev.Object.(*appsv1.Deployment); ok && ev.Type == watch.Added {
			created, _ = strconv.ParseInt(d.ResourceVersion, 10, 64)
			break
		}
	}
	list, err := kc.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := 0
	for _, cm := range list.Items {
		rv, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
		if strings.HasPrefix(cm.Name, "data-") && rv < created {
			before++
		}
	}
	// Applies go 8 at a time: only those already in flight may land first.
	if created == 0 || before > 8 {
		t.Errorf("%d of the %d ConfigMaps nothing names were created before the Deployment (revision %d), want at most 8 in flight", before, unnamed, created)
	}
}

// webDeployment is Deployment ns/web of one replica, its pod spec ending
// with podSpec (YAML indented for the container's fields).
func webDeployment(ns, podSpec string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %s
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example/web:1.0.0
`, ns) + podSpec
}
