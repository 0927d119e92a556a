package main

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func TestSSAAnnotations(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ignored.yaml"), `apiVersion: v1
kind: ConfigMap
metadata:
  name: ignored
  annotations:
    kustomize-deploy.dev/ssa: Ignore
data:
  k: v
`)
	writeFile(t, filepath.Join(dir, "once.yaml"), `apiVersion: v1
kind: ConfigMap
metadata:
  name: once
  annotations:
    kustomize.toolkit.fluxcd.io/ssa: IfNotPresent
data:
  k: from-git
`)
	o, r := c.apply("--name", "ssa", "--path", dir, "--target-namespace", c.ns)
	if o.code != exitOK {
		t.Fatalf("apply: %s: %s", r.Reason, r.Message)
	}
	wantActions(t, r, map[string]result.Action{
		"ConfigMap/" + c.ns + "/ignored": result.Skipped,
		"ConfigMap/" + c.ns + "/once":    result.Created,
	})
	client := cluster.Client(t)
	if _, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "ignored", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ssa: Ignore object was applied: %v", err)
	}
	// Someone edits the IfNotPresent object; the next apply leaves it be.
	cm, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "once", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "edited"
	if _, err := client.CoreV1().ConfigMaps(c.ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if o, r := c.apply("--name", "ssa", "--path", dir, "--target-namespace", c.ns); o.code != exitOK {
		t.Fatalf("second apply: %s", r.Message)
	}
	cm, _ = client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "once", metav1.GetOptions{})
	if cm.Data["k"] != "edited" {
		t.Errorf("IfNotPresent object was overwritten: %v", cm.Data)
	}
}

func TestManualEditIsCorrected(t *testing.T) {
	c := newCLI(t)
	dir := fixture(t, "plain")
	if o, r := c.apply("--name", "drift", "--path", dir, "--target-namespace", c.ns, "--wait=false"); o.code != exitOK {
		t.Fatalf("apply: %s", r.Message)
	}
	client := cluster.Client(t)
	cm, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = "edited by hand"
	if _, err := client.CoreV1().ConfigMaps(c.ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	o, r := c.apply("--name", "drift", "--path", dir, "--target-namespace", c.ns, "--wait=false")
	if o.code != exitOK {
		t.Fatalf("re-apply: %s", r.Message)
	}
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/settings": result.Configured})
	cm, _ = client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if cm.Data["greeting"] != "hello" {
		t.Errorf("manual edit survived the apply: %v", cm.Data)
	}
}

// An object first applied with kubectl is taken over: kubectl's field
// manager and last-applied annotation are folded into ours, so a field
// that is not in Git any more really goes.
func TestObjectsAppliedByKubectlAreTakenOver(t *testing.T) {
	c := newCLI(t)
	cms := cluster.Client(t).CoreV1().ConfigMaps(c.ns)
	legacy := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Annotations: map[string]string{
			corev1.LastAppliedConfigAnnotation: `{"apiVersion":"v1","kind":"ConfigMap","data":{"keep":"1","drop":"2"}}`,
		}},
		Data: map[string]string{"keep": "1", "drop": "2"},
	}
	if _, err := cms.Create(t.Context(), legacy, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "legacy.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: legacy\ndata:\n  keep: \"1\"\n")
	o, r := c.apply("--name", "takeover", "--path", dir, "--target-namespace", c.ns, "--wait=false")
	if o.code != exitOK {
		t.Fatalf("apply: %s", r.Message)
	}
	got, err := cms.Get(t.Context(), "legacy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Data["drop"]; ok {
		t.Errorf("a field kubectl applied and Git dropped survived: %v", got.Data)
	}
	if _, ok := got.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
		t.Errorf("kubectl's last-applied annotation survived")
	}
	for _, mf := range got.ManagedFields {
		if strings.HasPrefix(mf.Manager, "kubectl") {
			t.Errorf("kubectl still manages fields: %+v", mf)
		}
	}
}
