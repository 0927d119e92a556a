package testcluster

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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// Container logs: the fake nodes have no container runtime, so nothing
// writes logs; kwok plays the kubelet's log endpoint instead, serving, for
// a pod, files its ClusterLogs rules name. The API server reaches it
// through its node proxy (pods/log), as it reaches a real kubelet: what a
// test simulates is only what the container printed.

var clusterLogsGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterlogs"}

// clusterLogsCRD is the smallest CustomResourceDefinition kwok's ClusterLogs
// informer needs (kwok's own ships with the full schema; this one keeps
// unknown fields).
const clusterLogsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterlogs.kwok.x-k8s.io
spec:
  group: kwok.x-k8s.io
  names:
    kind: ClusterLogs
    listKind: ClusterLogsList
    plural: clusterlogs
    singular: clusterlogs
  scope: Cluster
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

// createKwokCRDs installs the kinds kwok is told to read from the cluster
// (--enable-crds) and waits until they are served, before kwok starts.
func (c *Cluster) createKwokCRDs() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	var crd unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(clusterLogsCRD), &crd.Object); err != nil {
		return err
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating kwok's ClusterLogs definition: %w", err)
	}
	for {
		if _, err := dyn.Resource(clusterLogsGVR).List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kwok's ClusterLogs definition was not served: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ContainerLog is what a container printed, as the kubelet would serve it:
// Lines of the running instance and, after a crash, Previous of the one
// before it.
type ContainerLog struct {
	Container string
	Lines     []string
	Previous  []string
}

// ServeLogs makes the kubelet (kwok) serve logs as the containers of
// every pod in namespace had printed them, until the test ends; a
// container not in logs has none. The lines are written to files in the
// test's temporary directory, in the CRI log format a kubelet reads.
func (c *Cluster) ServeLogs(t testing.TB, namespace string, logs ...ContainerLog) {
	t.Helper()
	dir := t.TempDir()
	var entries []any
	for i, l := range logs {
		entry := map[string]any{"containers": []any{l.Container}}
		for key, lines := range map[string][]string{"logsFile": l.Lines, "previousLogsFile": l.Previous} {
			path := filepath.Join(dir, fmt.Sprintf("%d-%s.log", i, key))
			if err := os.WriteFile(path, criLog(lines), 0o644); err != nil {
				t.Fatal(err)
			}
			entry[key] = path
		}
		entries = append(entries, entry)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "ClusterLogs",
		"metadata":   map[string]any{"name": "logs-" + namespace},
		"spec": map[string]any{
			"selector": map[string]any{"matchNamespaces": []any{namespace}},
			"logs":     entries,
		},
	}}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := dyn.Resource(clusterLogsGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("serving logs in %s: %v", namespace, err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(clusterLogsGVR).Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{})
	})
}

// criLog is lines in the CRI log format: "<RFC3339Nano> stdout F <line>".
func criLog(lines []string) []byte {
	var b strings.Builder
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, l := range lines {
		fmt.Fprintf(&b, "%s stdout F %s\n", at.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), l)
	}
	return []byte(b.String())
}
