package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	writeFile(t, filepath.Join(dir, "deployment.yaml"), fmt.Sprintf(`apiVersion: apps/v1
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
`, ns))
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
