package main

import (
	"path/filepath"
	"testing"

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
