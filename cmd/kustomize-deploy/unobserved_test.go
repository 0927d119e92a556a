package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// gadgetCRD is a CRD of kind Gadget in group whose status, a subresource,
// defaults observedGeneration to -1 as Flux's CRDs do: until a controller
// observes a Gadget, kstatus has it in progress.
func gadgetCRD(group string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.%[1]s
spec:
  group: %[1]s
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            default: {observedGeneration: -1}
            properties:
              observedGeneration: {type: integer, format: int64}
              conditions: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, group)
}

// A custom resource no controller ever observes: the wait says so after
// a grace (a quarter of this short timeout), naming the kind, instead of
// waiting out the timeout and ending with "latest observed generation is
// -1".
func TestUnobservedCustomResourceIsNamedBeforeTheTimeout(t *testing.T) {
	c := newCLI(t)
	group := strings.ReplaceAll(c.ns, "-", "") + ".example.com"
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "crd.yaml"), gadgetCRD(group))
	writeFile(t, filepath.Join(dir, "gadget.yaml"), "apiVersion: "+group+"/v1\nkind: Gadget\nmetadata:\n  name: gizmo\nspec:\n  size: 3\n")
	t.Cleanup(func() {
		_ = dynamic.NewForConfigOrDie(cluster.Config).Resource(crdResource).Delete(context.Background(), "gadgets."+group, metav1.DeleteOptions{})
	})

	const timeout = 40 * time.Second
	start := time.Now()
	o := c.run("apply", "--name", "gadgets", "--path", dir, "-n", c.ns, "--timeout", timeout.String())
	took := time.Since(start)
	if o.code != exitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", o.code, exitFail, o.stdout, o.stderr)
	}
	contains(t, "output", o.stdout, string(result.ReasonHealthCheckFailed),
		"1 object(s) not observed by any controller after",
		"Gadget/"+c.ns+"/gizmo: no controller seems to act on Gadget."+group+": is its controller running?")
	for _, not := range []string{"latest observed generation is -1", "timeout after"} {
		if strings.Contains(o.stdout, not) {
			t.Errorf("output says %q:\n%s", not, o.stdout)
		}
	}
	// The grace is a quarter of the timeout: 10s.
	if took > timeout/2 {
		t.Errorf("the run took %s, not well before the timeout of %s", took.Round(time.Second), timeout)
	}
}
