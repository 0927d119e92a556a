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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// widgetCRD is a CRD of kind Widget in group, with any spec.
func widgetCRD(group string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[1]s
spec:
  group: %[1]s
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group)
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// deleteCRD deletes the CRD name as someone would by hand, and waits
// until it is gone (its custom resources with it).
func deleteCRD(t *testing.T, name string) {
	t.Helper()
	crds := dynamic.NewForConfigOrDie(cluster.Config).Resource(crdResource)
	if err := crds.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		_, err := crds.Get(t.Context(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s is not gone after a minute: %v", name, err)
		}
	}
}

// A unit whose inventory lists objects of a kind whose CRD was deleted
// out of band: no such object can exist any more, so delete says so and
// finishes, inventory and all, instead of failing on every try.
func TestDeleteFinishesWhenAKindIsNoLongerServed(t *testing.T) {
	c := newCLI(t)
	group := strings.ReplaceAll(c.ns, "-", "") + ".example.com"
	defs, widgets := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(defs, "crd.yaml"), widgetCRD(group))
	writeFile(t, filepath.Join(widgets, "widget.yaml"), "apiVersion: "+group+"/v1\nkind: Widget\nmetadata:\n  name: gizmo\nspec:\n  size: 3\n")
	writeFile(t, filepath.Join(widgets, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n")
	t.Cleanup(func() {
		_ = dynamic.NewForConfigOrDie(cluster.Config).Resource(crdResource).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
	})
	if o, r := c.apply("--name", "defs", "--path", defs); o.code != exitOK {
		t.Fatalf("apply defs: %s: %s", r.Reason, r.Message)
	}
	if o, r := c.apply("--name", "widgets", "--path", widgets, "-n", c.ns); o.code != exitOK {
		t.Fatalf("apply widgets: %s: %s", r.Reason, r.Message)
	}
	deleteCRD(t, "widgets."+group)

	o := c.run("delete", "--name", "widgets")
	if o.code != exitOK {
		t.Fatalf("delete: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "delete output", o.stdout,
		"Widget/"+c.ns+"/gizmo", "the cluster does not serve kind Widget."+group+" (no CRD defines it): no such object can exist",
		"ConfigMap/"+c.ns+"/settings", "widgets delete succeeded")
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "widgets")
	if err != nil || inv != nil {
		t.Errorf("the inventory survives delete: %+v %v", inv, err)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unit's ConfigMap survives delete: %v", err)
	}
	if o := c.run("delete", "--name", "defs"); o.code != exitOK {
		t.Errorf("delete defs, whose CRD is gone already: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
}

// The same for a prune: the custom resource left Git after its CRD left
// the cluster.
func TestPruneFinishesWhenAKindIsNoLongerServed(t *testing.T) {
	c := newCLI(t)
	group := strings.ReplaceAll(c.ns, "-", "") + ".example.com"
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "crd.yaml"), widgetCRD(group))
	writeFile(t, filepath.Join(dir, "widget.yaml"), "apiVersion: "+group+"/v1\nkind: Widget\nmetadata:\n  name: gizmo\nspec:\n  size: 3\n")
	writeFile(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n")
	t.Cleanup(func() {
		_ = dynamic.NewForConfigOrDie(cluster.Config).Resource(crdResource).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
	})
	if o, r := c.apply("--name", "widgets", "--path", dir, "-n", c.ns); o.code != exitOK {
		t.Fatalf("apply: %s: %s", r.Reason, r.Message)
	}
	deleteCRD(t, "widgets."+group)
	for _, f := range []string{"crd.yaml", "widget.yaml"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}

	o, r := c.apply("--name", "widgets", "--path", dir, "-n", c.ns)
	if o.code != exitOK {
		t.Fatalf("prune: exit %d, %s: %s", o.code, r.Reason, r.Message)
	}
	wantActions(t, r, map[string]result.Action{
		"Widget/" + c.ns + "/gizmo":                 result.Skipped,
		"CustomResourceDefinition/widgets." + group: result.Skipped,
		"ConfigMap/" + c.ns + "/settings":           result.Unchanged,
	})
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "widgets")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(inv.Entries); got != 1 {
		t.Errorf("the inventory keeps %d entries, want the ConfigMap alone: %+v", got, inv.Entries)
	}
}
