package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// holdFinalizer keeps a Namespace the test deletes in Terminating until
// the test lets it go.
const holdFinalizer = "test.kustomize-deploy.dev/hold"

// A re-run right after a delete finds the unit's Namespace still being
// deleted (the API server refuses to create anything in it, with 403):
// the run says so, waits for the Namespace to be gone, then creates it
// anew, instead of failing as if RBAC were missing.
func TestRerunAfterDeleteWaitsForTheNamespace(t *testing.T) {
	c := newCLI(t)
	k8s := cluster.Client(t)
	ns := c.ns + "-again"
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		_, _ = k8s.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		_ = k8s.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "namespace.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n")
	writeFile(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: "+ns+"\ndata:\n  a: b\n")
	if o, r := c.apply("--name", "again", "--path", dir); o.code != exitOK {
		t.Fatalf("apply: %s: %s", r.Reason, r.Message)
	}
	// As a slow finalizer would, hold the Namespace in Terminating.
	hold, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": []string{holdFinalizer}}})
	if _, err := k8s.CoreV1().Namespaces().Patch(t.Context(), ns, types.MergePatchType, hold, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if o := c.run("delete", "--name", "again"); o.code != exitOK {
		t.Fatalf("delete: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}

	release := func() {
		_, err := k8s.CoreV1().Namespaces().Patch(context.WithoutCancel(t.Context()), ns, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if err != nil {
			t.Errorf("releasing the namespace: %v", err)
		}
	}
	stderr := &watchedBuffer{watch: "being deleted; waiting", on: release}
	o, finished := runBounded(t, t.Context(), 3*time.Minute, stderr, append([]string{"apply", "--name", "again", "--path", dir, "--timeout", "2m"}, c.clusterFlags()...)...)
	if !finished || o.code != exitOK {
		t.Fatalf("the re-run: finished %v, exit %d\n%s\n%s", finished, o.code, o.stdout, o.stderr)
	}
	contains(t, "the re-run's progress", o.stderr, "namespace(s) "+ns+" being deleted; waiting up to 2m0s for them to be gone")
	if strings.Contains(o.stdout+o.stderr, "RBAC") {
		t.Errorf("the re-run blames RBAC:\n%s\n%s", o.stdout, o.stderr)
	}
	if _, err := k8s.CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the unit's ConfigMap was not created anew: %v", err)
	}
}

// A ResourceQuota's refusal (403) is explained as the quota's, not as a
// lack of RBAC permission.
func TestQuotaRefusalNamesTheQuota(t *testing.T) {
	c := newCLI(t)
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "few"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("0")}}}
	if _, err := cluster.Client(t).CoreV1().ResourceQuotas(c.ns).Create(t.Context(), quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitQuotaCounted(t, c.ns, "few")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n")
	o, r := c.apply("--name", "quota", "--path", dir, "-n", c.ns)
	if o.code != exitFail || r.Reason != result.ReasonValidationFailed {
		t.Fatalf("exit %d, %s: %s", o.code, r.Reason, r.Message)
	}
	contains(t, "message", r.Message, "ConfigMap/"+c.ns+"/settings (settings.yaml)", "exceeded quota: few",
		"a ResourceQuota of namespace "+c.ns+" refuses it: raise the quota, or lower what the object asks for")
	if strings.Contains(r.Message, "RBAC") {
		t.Errorf("the message blames RBAC: %s", r.Message)
	}
}

// waitQuotaCounted waits until the quota controller has counted what the
// namespace holds: until then, admission refuses everything it covers
// ("status unknown for quota").
func waitQuotaCounted(t *testing.T, ns, name string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		q, err := cluster.Client(t).CoreV1().ResourceQuotas(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := q.Status.Used["count/configmaps"]; ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("quota %s/%s was never counted: %+v", ns, name, q.Status)
		}
	}
}

// Pod Security admission's refusal (403) is explained as the namespace's
// Pod Security level, not as a lack of RBAC permission.
func TestPodSecurityRefusalNamesTheLevel(t *testing.T) {
	c := newCLI(t)
	k8s := cluster.Client(t)
	restricted := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`)
	if _, err := k8s.CoreV1().Namespaces().Patch(t.Context(), c.ns, types.MergePatchType, restricted, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pod.yaml"), "apiVersion: v1\nkind: Pod\nmetadata:\n  name: debug\nspec:\n  containers:\n  - name: shell\n    image: registry.example/shell:1\n")
	o, r := c.apply("--name", "pss", "--path", dir, "-n", c.ns)
	if o.code != exitFail || r.Reason != result.ReasonValidationFailed {
		t.Fatalf("exit %d, %s: %s", o.code, r.Reason, r.Message)
	}
	contains(t, "message", r.Message, "Pod/"+c.ns+"/debug (pod.yaml)", `violates PodSecurity "restricted`,
		"the Pod Security admission of namespace "+c.ns+" refuses the pod")
	if strings.Contains(r.Message, "RBAC") {
		t.Errorf("the message blames RBAC: %s", r.Message)
	}
	if _, err := k8s.CoreV1().Pods(c.ns).Get(t.Context(), "debug", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused pod exists: %v", err)
	}
}
