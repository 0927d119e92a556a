package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// rbacExamples writes examples/rbac for namespace ns: the namespace, the
// identities' usernames and the cluster-wide policy's name (one per test
// namespace) replaced.
func rbacExamples(t *testing.T, ns string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob("../../examples/rbac/*.yaml")
	if err != nil || len(files) != 3 {
		t.Fatalf("examples/rbac: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.NewReplacer(
			"namespace: apps", "namespace: "+ns,
			"system:serviceaccount:apps:", "system:serviceaccount:"+ns+":",
			"kustomize-deploy-diff-dry-run-only", "kustomize-deploy-diff-dry-run-only-"+ns,
		).Replace(string(data))
		writeFile(t, filepath.Join(dir, filepath.Base(f)), s)
	}
	return dir
}

// webUnit is the unit the RBAC examples are written for: "web", made of a
// ConfigMap (with settings, when given), a Service, a Deployment and the
// Secret "credentials".
func webUnit(t *testing.T, dir, value string, settings bool) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "app.yaml"), `apiVersion: v1
kind: ConfigMap
metadata: {name: web}
data: {value: "`+value+`"}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.example/web:1.0}]
---
apiVersion: v1
kind: Secret
metadata: {name: credentials}
stringData: {password: rbac-example-password}
`)
	if settings {
		writeFile(t, filepath.Join(dir, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n")
	}
}

// examples/rbac is what SECURITY.md ("Least privilege") says it is: the deployer identity can
// apply, diff, correct drift, prune and delete a unit with nothing
// forbidden on the way; the PR identity can diff it, cannot apply it
// (refused before anything is written), and with the admission policy
// cannot write anything for real.
func TestExampleRBACIsEnough(t *testing.T) {
	c := newCLI(t)
	ns := c.ns
	admin := cluster.Client(t)
	if o, r := c.apply("--name", "rbac", "--path", rbacExamples(t, ns)); o.code != exitOK {
		t.Fatalf("applying examples/rbac as admin: exit %d %v\n%s", o.code, r.Reason, o.stderr)
	}
	t.Cleanup(func() { c.run("delete", "--name", "rbac") })
	deployer := []string{"--as", "system:serviceaccount:" + ns + ":kustomize-deploy", "-n", ns}
	prDiff := []string{"--as", "system:serviceaccount:" + ns + ":kustomize-deploy-diff", "-n", ns}
	unit := filepath.Join(t.TempDir(), "web")
	quiet := func(what string, o outcome) {
		t.Helper()
		for _, s := range []string{"forbidden", "Forbidden", "warning"} {
			if strings.Contains(o.stderr, s) {
				t.Errorf("%s: %q on stderr:\n%s", what, s, o.stderr)
			}
		}
	}
	value := func(name string) (string, bool) {
		cm, err := admin.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return "", false
		}
		if err != nil {
			t.Fatal(err)
		}
		return cm.Data["value"], true
	}

	// The deployer: apply, drift and its correction, prune, delete.
	webUnit(t, unit, "1", true)
	o, r := c.apply(append([]string{"--name", "web", "--path", unit}, deployer...)...)
	if o.code != exitOK {
		t.Fatalf("apply as the deployer: exit %d %s\n%s", o.code, r.Reason, o.stderr)
	}
	quiet("apply", o)
	wantActions(t, r, map[string]result.Action{"Deployment/" + ns + "/web": result.Created, "Secret/" + ns + "/credentials": result.Created})

	if _, err := admin.CoreV1().ConfigMaps(ns).Patch(t.Context(), "web", "application/merge-patch+json", []byte(`{"data":{"value":"by-hand"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	o, r = c.drift(append([]string{"--name", "web", "--path", unit, "--correct"}, deployer...)...)
	if o.code != exitOK || !r.Drifted || !r.Ready {
		t.Fatalf("drift --correct as the deployer: exit %d %s\n%s", o.code, r.Reason, o.stderr)
	}
	quiet("drift", o)
	if v, _ := value("web"); v != "1" {
		t.Errorf("after drift --correct the ConfigMap holds %q, Git 1", v)
	}

	webUnit(t, unit, "2", false)
	o = c.run(append([]string{"diff", "--name", "web", "--path", unit}, deployer...)...)
	if o.code != exitOK {
		t.Fatalf("diff as the deployer: exit %d\n%s", o.code, o.stderr)
	}
	quiet("diff", o)
	contains(t, "diff", o.stdout, "settings")
	o, r = c.apply(append([]string{"--name", "web", "--path", unit}, deployer...)...)
	if o.code != exitOK {
		t.Fatalf("apply with a prune as the deployer: exit %d %s\n%s", o.code, r.Reason, o.stderr)
	}
	quiet("apply with a prune", o)
	if _, ok := value("settings"); ok {
		t.Error("the ConfigMap that left Git was not pruned")
	}

	// The PR identity: a diff works, an apply is refused before any write.
	webUnit(t, unit, "3", false)
	o = c.run(append([]string{"diff", "--name", "web", "--path", unit}, prDiff...)...)
	if o.code != exitOK {
		t.Fatalf("diff as the PR identity: exit %d\n%s", o.code, o.stderr)
	}
	quiet("diff as the PR identity", o)
	contains(t, "diff as the PR identity", o.stdout, `+  value: "3"`)
	o = c.run(append([]string{"apply", "--name", "web", "--path", unit, "--timeout", "60s"}, prDiff...)...)
	if o.code == exitOK || !strings.Contains(o.stdout+o.stderr, "forbidden") {
		t.Errorf("apply as the PR identity: exit %d, want a refusal naming what is forbidden\n%s%s", o.code, o.stdout, o.stderr)
	}
	if v, _ := value("web"); v != "2" {
		t.Errorf("the refused apply changed the ConfigMap to %q", v)
	}

	// With the admission policy, its real writes are refused, dry-runs not.
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":kustomize-deploy-diff"}
	asPR := kubernetes.NewForConfigOrDie(cfg)
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns}}
	deadline := time.Now().Add(30 * time.Second) // the policy takes effect within a second or so
	for {
		_, err := asPR.CoreV1().ConfigMaps(ns).Create(t.Context(), probe, metav1.CreateOptions{})
		if err != nil && strings.Contains(err.Error(), "may only dry-run") {
			break
		}
		if err == nil {
			_ = admin.CoreV1().ConfigMaps(ns).Delete(context.WithoutCancel(t.Context()), "probe", metav1.DeleteOptions{})
		}
		if time.Now().After(deadline) {
			t.Fatalf("a real write of the PR identity was not refused by the policy: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	o = c.run(append([]string{"diff", "--name", "web", "--path", unit}, prDiff...)...)
	if o.code != exitOK {
		t.Fatalf("diff as the PR identity under the policy: exit %d\n%s", o.code, o.stderr)
	}
	contains(t, "diff under the policy", o.stdout, `+  value: "3"`)

	// The deployer deletes the unit: everything it owns, then its inventory.
	o = c.run(append([]string{"delete", "--name", "web"}, deployer[:2]...)...)
	if o.code != exitOK {
		t.Fatalf("delete as the deployer: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	quiet("delete", o)
	if _, ok := value("web"); ok {
		t.Error("delete left the ConfigMap")
	}
	if _, err := admin.CoreV1().Secrets(ns).Get(t.Context(), "kustomize-deploy.web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("delete left the inventory: %v", err)
	}

	// Without the right to read a Deployment's status, the wait ends at
	// once naming the missing right, instead of waiting out its timeout.
	role, err := admin.RbacV1().Roles(ns).Get(t.Context(), "kustomize-deploy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, rule := range role.Rules {
		if slices.Contains(rule.Resources, "deployments") {
			role.Rules[i].Verbs = slices.DeleteFunc(rule.Verbs, func(v string) bool { return v == "list" })
		}
	}
	if _, err := admin.RbacV1().Roles(ns).Update(t.Context(), role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	o = c.run(append([]string{"apply", "--name", "web", "--path", unit, "--timeout", "10m"}, deployer...)...)
	if o.code == exitOK || strings.Contains(o.stdout+o.stderr, "timeout after") {
		t.Fatalf("apply without the right to list Deployments: exit %d\n%s", o.code, o.stderr)
	}
	contains(t, "apply without the right to list Deployments", o.stdout+o.stderr, "Deployment/"+ns+"/web", `cannot list resource "deployments"`)
}
