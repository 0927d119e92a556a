package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Manifests written for kubectl apply -n (podinfo's kustomize/, kustomize's
// helloWorld) name no namespace: they go to -n, cluster-scoped objects stay
// cluster-scoped, and the text output says where objects went. The
// inventory stays in --inventory-namespace.
func TestObjectsWithoutANamespaceGoToNamespaceFlag(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	role := fmt.Sprintf("reader-%s", c.ns)
	writeFile(t, filepath.Join(dir, "configmap.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n")
	writeFile(t, filepath.Join(dir, "role.yaml"), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: "+role+"\nrules: []\n")
	target := cluster.Namespace(t)

	o := c.run("apply", "--name", "nons", "--path", dir, "-n", target, "--timeout", "60s")
	if o.code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "output", o.stdout, "ConfigMap/"+target+"/settings", "ClusterRole/"+role, "objects without a namespace went to namespace "+target)
	k := cluster.Client(t)
	if _, err := k.CoreV1().ConfigMaps(target).Get(t.Context(), "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap is not in %s: %v", target, err)
	}
	t.Cleanup(func() { _ = k.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{}) })
	if _, err := k.RbacV1().ClusterRoles().Get(t.Context(), role, metav1.GetOptions{}); err != nil {
		t.Errorf("the ClusterRole: %v", err)
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "nons")
	if err != nil || inv == nil || len(inv.Entries) != 2 {
		t.Fatalf("the inventory is not in --inventory-namespace %s: %v %+v", c.ns, err, inv)
	}

	// --target-namespace still wins, for objects that name a namespace too.
	_, r := c.apply("--name", "nons", "--path", dir, "-n", target, "--target-namespace", c.ns)
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/settings": result.Created, "ConfigMap/" + target + "/settings": result.Deleted})
	if r.Namespace != "" {
		t.Errorf("with --target-namespace every object names its namespace; the result says %q went to -n", r.Namespace)
	}
}

func TestCompletion(t *testing.T) {
	c := newCLI(t)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		o := c.runAsIs("completion", shell)
		if o.code != exitOK || !strings.Contains(o.stdout, "kustomize-deploy") {
			t.Errorf("completion %s: exit %d, %d bytes\n%s", shell, o.code, len(o.stdout), o.stderr)
		}
	}
	o := c.runAsIs("__complete", "apply", "--validation", "")
	contains(t, "validation values", o.stdout, "server", "client", "none")

	dir := fixture(t, "plain")
	if o, r := c.apply("--name", "completed", "--path", dir, "--target-namespace", c.ns, "--wait=false"); o.code != exitOK {
		t.Fatalf("%s: %s", r.Reason, r.Message)
	}
	o = c.runAsIs(append(append([]string{"__complete", "status"}, c.clusterFlags()...), "--name", "")...)
	contains(t, "unit names", o.stdout, "completed\tApplySucceed")
}
