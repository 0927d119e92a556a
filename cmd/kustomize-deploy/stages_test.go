package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// stagedFixture writes a Namespace, a CRD, a custom resource of it in that
// Namespace and a ConfigMap there too: on a first deploy neither the
// Namespace nor the kind exists, so those objects cannot be dry-run before
// the definitions stage is applied. The names derive from the test's own
// namespace so parallel packages never collide; both are removed at the end.
func stagedFixture(t *testing.T, base, configMapData string) (dir, ns, group string) {
	t.Helper()
	ns, group = base+"-staged", strings.ReplaceAll(base, "-", "")+".example.com"
	dir = t.TempDir()
	writeFile(t, filepath.Join(dir, "namespace.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n")
	writeFile(t, filepath.Join(dir, "crd.yaml"), fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
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
          spec:
            type: object
            properties:
              size: {type: integer}
`, group))
	writeFile(t, filepath.Join(dir, "widget.yaml"), fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: %s\nspec:\n  size: 3\n", group, ns))
	writeFile(t, filepath.Join(dir, "settings.yaml"), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: %s\ndata:\n%s", ns, configMapData))
	t.Cleanup(func() {
		client := cluster.Client(t)
		_ = client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		dyn := dynamic.NewForConfigOrDie(cluster.Config)
		crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		_ = dyn.Resource(crds).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
	})
	return dir, ns, group
}

func TestFirstDeployCreatesNamespaceKindAndTheirObjects(t *testing.T) {
	c := newCLI(t)
	dir, ns, group := stagedFixture(t, c.ns, "  mode: fast\n")
	r, _ := c.countedApply("--name", "staged", "--path", dir)
	wantActions(t, r, map[string]result.Action{
		"Namespace/" + ns: result.Created,
		"CustomResourceDefinition/widgets." + group: result.Created,
		"Widget/" + ns + "/w":                       result.Created,
		"ConfigMap/" + ns + "/settings":             result.Created,
	})
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	w, err := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns).Get(t.Context(), "w", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the custom resource was not created: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 3 {
		t.Errorf("Widget spec.size = %d, want 3", size)
	}

	// The second run finds everything in place.
	r, _ = c.countedApply("--name", "staged", "--path", dir)
	for _, e := range r.Entries {
		if e.Action != result.Unchanged {
			t.Errorf("%s: %s on a re-run, want unchanged", e.Object, e.Action)
		}
	}
}

// Objects whose Namespace the build creates cannot be dry-run on a first
// deploy; server validation checks them against the offline schemas
// instead, so an invalid one still stops the unit before anything is
// written.
func TestObjectInNewNamespaceIsValidatedBeforeAnythingIsApplied(t *testing.T) {
	c := newCLI(t)
	dir, ns, _ := stagedFixture(t, c.ns, "  port: 80\n")
	o, r := c.apply("--name", "staged", "--path", dir)
	if o.code != exitFail || r.Reason != result.ReasonValidationFailed {
		t.Fatalf("exit %d reason %s, want %d %s: %s", o.code, r.Reason, exitFail, result.ReasonValidationFailed, r.Message)
	}
	contains(t, "message", r.Message, "ConfigMap/"+ns+"/settings", "settings.yaml", "data.port")
	if _, err := cluster.Client(t).CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Namespace of a unit that failed validation was created: %v", err)
	}
}
