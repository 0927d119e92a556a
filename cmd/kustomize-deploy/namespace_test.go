package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/danger"
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

// A unit whose Namespace is renamed creates the new one and prunes the
// old: the created Namespace is flagged as replacing the old one (its
// objects are deleted, not moved), where a new Namespace alone is not.
func TestRenamedNamespaceIsRisky(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	old, renamed := c.ns+"-a", c.ns+"-b"
	k := cluster.Client(t)
	t.Cleanup(func() {
		for _, ns := range []string{old, renamed} {
			_ = k.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})
	namespace := func(name string) {
		writeFile(t, filepath.Join(dir, "ns.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+name+"}\n")
	}
	namespace(old)
	o, r := c.apply("--name", "renamed", "--path", dir, "--timeout", "60s", "--wait=false")
	if o.code != exitOK {
		t.Fatalf("apply: %s %s", r.Reason, r.Message)
	}
	for _, e := range r.Entries {
		if len(e.Dangers) > 0 {
			t.Errorf("a new Namespace alone is flagged: %+v", e)
		}
	}

	namespace(renamed)
	o = c.run("diff", "--name", "renamed", "--path", dir, "-o", "json")
	var d result.Result
	if err := json.Unmarshal([]byte(o.stdout), &d); err != nil {
		t.Fatalf("exit %d: %v\n%s", o.code, err, o.stderr)
	}
	wantActions(t, &d, map[string]result.Action{"Namespace/" + old: result.Deleted, "Namespace/" + renamed: result.Created})
	var flagged bool
	for _, e := range d.Entries {
		if e.Object.Name == renamed {
			flagged = len(e.Dangers) == 1 && e.Dangers[0].Risk == danger.RiskNamespaceReplaced && strings.Contains(e.Dangers[0].Consequence, "'"+old+"'")
		}
	}
	if !flagged {
		t.Errorf("the renamed Namespace is not flagged as replacing %s: %+v", old, d.Entries)
	}
}
