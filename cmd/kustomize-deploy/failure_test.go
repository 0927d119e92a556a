package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func TestFailingPodIsHealthCheckFailed(t *testing.T) {
	c := newCLI(t)
	dir := fixture(t, "failing")
	o := c.run("apply", "--name", "failing", "--path", dir, "--target-namespace", c.ns, "--timeout", "8s")
	if o.code != exitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", o.code, exitFail, o.stdout, o.stderr)
	}
	contains(t, "output", o.stdout, string(result.ReasonHealthCheckFailed), "Deployment/"+c.ns+"/broken", "pod broken-", "readiness probe failed")
	contains(t, "progress", o.stderr, "waiting for 1 of 1 object(s)")
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "failing")
	if err != nil || inv == nil {
		t.Fatalf("inventory %v %v", inv, err)
	}
	if inv.Status.Ready.Reason != result.ReasonHealthCheckFailed || inv.Status.Ready.Status != "False" {
		t.Errorf("inventory status %+v", inv.Status.Ready)
	}
}

func TestImmutableFieldNeedsForce(t *testing.T) {
	c := newCLI(t)
	dir := fixture(t, "immutable")
	args := []string{"--name", "job", "--target-namespace", c.ns}
	if o, r := c.apply(append(args, "--path", filepath.Join(dir, "v1"))...); o.code != exitOK {
		t.Fatalf("v1: %s: %s", r.Reason, r.Message)
	}
	o, r := c.apply(append(args, "--path", filepath.Join(dir, "v2"), "--validation", "none")...)
	if o.code != exitFail || r.Reason != result.ReasonApplyFailed {
		t.Fatalf("v2 without --force: exit %d reason %s, want failure", o.code, r.Reason)
	}
	contains(t, "message", r.Message, "Job/"+c.ns+"/migrate", "job.yaml", "immutable")
	contains(t, "hint", o.stderr, "hint: --force recreates")
	if !recreates(r, "Job/"+c.ns+"/migrate") {
		t.Errorf("the failed Job's entry does not say it needs recreation: %+v", r.Entries)
	}
	// A diff says so too, before anything is tried.
	o, d := c.diff(append(args, "--path", filepath.Join(dir, "v2"))...)
	if !recreates(d, "Job/"+c.ns+"/migrate") {
		t.Errorf("diff: the Job's entry does not say it needs recreation (exit %d): %+v", o.code, d.Entries)
	}

	o, r = c.apply(append(args, "--path", filepath.Join(dir, "v2"), "--force")...)
	if o.code != exitOK {
		t.Fatalf("v2 with --force: %s: %s", r.Reason, r.Message)
	}
	wantActions(t, r, map[string]result.Action{"Job/" + c.ns + "/migrate": result.Created})
	var job *batchv1.Job
	job, err := cluster.Client(t).BatchV1().Jobs(c.ns).Get(t.Context(), "migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := job.Spec.Template.Spec.Containers[0].Image; img != "registry.example/migrate:2" {
		t.Errorf("job image %s after --force", img)
	}
}

func TestServerValidationErrorAppliesNothing(t *testing.T) {
	c := newCLI(t)
	dir := fixture(t, "invalid")
	o, r := c.apply("--name", "invalid", "--path", dir, "--target-namespace", c.ns)
	if o.code != exitFail || r.Reason != result.ReasonValidationFailed {
		t.Fatalf("exit %d reason %s: %s", o.code, r.Reason, r.Message)
	}
	contains(t, "message", r.Message, "Deployment/"+c.ns+"/bad", "deployment.yaml", "selector")
	_, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "fine", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the valid ConfigMap of a unit that failed validation was applied: %v", err)
	}
}

func TestDependencyNotReadyAppliesNothing(t *testing.T) {
	c := newCLI(t)
	dir := fixture(t, "plain")
	o, r := c.apply("--name", "app", "--path", dir, "--target-namespace", c.ns, "--depends-on", "infra")
	if o.code != exitFail || r.Reason != result.ReasonDependencyNotReady {
		t.Fatalf("exit %d reason %s: %s", o.code, r.Reason, r.Message)
	}
	contains(t, "message", r.Message, "'infra'")
	if len(r.Entries) != 0 {
		t.Errorf("entries despite a missing dependency: %v", r.Entries)
	}
	_, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("applied despite a missing dependency: %v", err)
	}

	// Once the dependency is Ready, the unit goes through.
	infra := t.TempDir()
	writeFile(t, filepath.Join(infra, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: infra\n  namespace: "+c.ns+"\n")
	if o, r := c.apply("--name", "infra", "--path", infra); o.code != exitOK {
		t.Fatalf("infra: %s", r.Message)
	}
	if o, r := c.apply("--name", "app", "--path", dir, "--target-namespace", c.ns, "--depends-on", "infra", "--wait=false"); o.code != exitOK {
		t.Fatalf("app after infra: %s: %s", r.Reason, r.Message)
	}
}

func TestServiceAccountWithoutRightsIsRefused(t *testing.T) {
	c := newCLI(t)
	client := cluster.Client(t)
	if _, err := client.CoreV1().ServiceAccounts(c.ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := fixture(t, "plain")
	o, r := c.apply("--name", "sa", "--path", dir, "--target-namespace", c.ns, "--service-account", "deployer")
	if o.code != exitFail {
		t.Fatalf("exit %d, want failure", o.code)
	}
	contains(t, "message", r.Message, "system:serviceaccount:"+c.ns+":deployer", "forbidden")
	if !strings.Contains(r.Message, "RBAC") {
		t.Errorf("message does not point at RBAC: %s", r.Message)
	}
	_, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("applied although the service account may not: %v", err)
	}
}

func TestDeleteRemovesEverythingAndTheInventory(t *testing.T) {
	c := newCLI(t)
	dir := fixture(t, "plain")
	if o, r := c.apply("--name", "gone", "--path", dir, "--target-namespace", c.ns, "--wait=false"); o.code != exitOK {
		t.Fatalf("apply: %s", r.Message)
	}
	o := c.run("delete", "--name", "gone")
	if o.code != exitOK {
		t.Fatalf("delete exit %d:\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "delete output", o.stdout, "deleted", "Deployment/"+c.ns+"/web", "ConfigMap/"+c.ns+"/settings")
	client := cluster.Client(t)
	if _, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("deployment survives delete: %v", err)
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "gone")
	if err != nil || inv != nil {
		t.Errorf("inventory survives delete: %+v %v", inv, err)
	}
	// Deleted already: nothing to delete, a success (a teardown may run twice).
	if o := c.run("delete", "--name", "gone"); o.code != exitOK || !strings.Contains(o.stdout+o.stderr, "has no inventory in namespace "+c.ns+": nothing to delete") {
		t.Errorf("deleting a unit deleted already: exit %d %s %s", o.code, o.stdout, o.stderr)
	}
}

func TestStatusListsUnits(t *testing.T) {
	c := newCLI(t)
	dir := fixture(t, "plain")
	if o, r := c.apply("--name", "shown", "--path", dir, "--target-namespace", c.ns, "--wait=false", "--revision", "abc123"); o.code != exitOK {
		t.Fatalf("apply: %s", r.Message)
	}
	o := c.run("status")
	if o.code != exitOK {
		t.Fatalf("status exit %d: %s", o.code, o.stderr)
	}
	contains(t, "status", o.stdout, "UNIT", "shown", "True", string(result.ReasonApplySucceed), "abc123", " 3 ")
}

func TestUsageErrorsExitTwo(t *testing.T) {
	c := newCLI(t)
	for _, args := range [][]string{
		{"apply", "--path", "testdata/plain"}, // no --name
		{"apply", "--name", "x"},              // no --path
		{"apply", "--name", "x", "--path", "testdata/plain", "--validation", "bogus"},
		{"apply", "--name", "x", "--path", "testdata/plain", "--image", "=broken"},
		{"diff", "--name", "x", "--path", "testdata/plain", "--output", "yaml"},
		{"apply", "--name", "x", "--path", "testdata/plain", "--kube-api-qps", "0"},
		{"apply", "--name", "Bad_Name", "--path", "testdata/plain"},
		{"apply", "--name", "x", "--path", "testdata/plain", "--depends-on", "ok,Not_OK"},
		{"apply", "--name", "x", "--path", "testdata/plain", "--namespace", "Not A Namespace"},
		{"apply", "-name", "x", "--path", "testdata/plain"}, // Go flag style: long flags take two dashes now
		{"apply", "--name", "x", "--path", "testdata/plain", "extra"},
		{"status", "--bogus"},
		{"delete"}, // no --name
	} {
		if o := c.run(args...); o.code != exitUsage || o.stderr == "" {
			t.Errorf("%q: exit %d stderr %q, want %d with an explanation", args, o.code, o.stderr, exitUsage)
		}
	}
}

func TestClientValidationErrorAppliesNothing(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ok.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n")
	writeFile(t, filepath.Join(dir, "typo.yaml"), "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  portz:\n  - port: 80\n")
	o, r := c.apply("--name", "client", "--path", dir, "--target-namespace", c.ns, "--validation", "client")
	if o.code != exitFail || r.Reason != result.ReasonValidationFailed {
		t.Fatalf("exit %d reason %s: %s", o.code, r.Reason, r.Message)
	}
	contains(t, "message", r.Message, "Service/"+c.ns+"/web", "typo.yaml", "spec.portz")
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "fine", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a unit that failed client validation was applied: %v", err)
	}
}

// An object over the API server's limits: a ConfigMap over its 1 MiB
// data limit is invalid, not immutable (no --force hint); one too large
// to store at all is refused right after the build, naming its file,
// and nothing is applied.
func TestOversizedObjects(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	blob := func(name string, n int) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  blob: %s\n", name, strings.Repeat("x", n))
	}
	writeFile(t, filepath.Join(dir, "small.yaml"), blob("small", 10))
	writeFile(t, filepath.Join(dir, "big.yaml"), blob("big", 1100<<10))
	o, r := c.apply("--name", "oversized", "--path", dir, "-n", c.ns)
	if o.code != exitFail || r.Reason != result.ReasonValidationFailed {
		t.Fatalf("1.1 MiB ConfigMap: exit %d reason %s: %s", o.code, r.Reason, r.Message)
	}
	contains(t, "message", r.Message, "ConfigMap/"+c.ns+"/big", "big.yaml", "1048576")
	if strings.Contains(o.stderr+r.Message, "--force") || strings.Contains(r.Message, "immutable") || recreates(r, "ConfigMap/"+c.ns+"/big") {
		t.Errorf("an invalid object gets the immutable-field advice:\n%s\n%s", r.Message, o.stderr)
	}

	writeFile(t, filepath.Join(dir, "big.yaml"), blob("big", 2<<20))
	o, r = c.apply("--name", "oversized", "--path", dir, "-n", c.ns)
	if o.code != exitFail || r.Reason != result.ReasonValidationFailed {
		t.Fatalf("2 MiB ConfigMap: exit %d reason %s: %s", o.code, r.Reason, r.Message)
	}
	contains(t, "message", r.Message, "ConfigMap/"+c.ns+"/big (big.yaml): 2.0 MiB serialised, over the 1.5 MiB")
	if strings.Contains(o.stderr, "dry-run") {
		t.Errorf("the objects were sent for a dry-run first:\n%s", o.stderr)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "small", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an object of the refused unit was applied: %v", err)
	}
}

// Damaged cached build inputs in the inventory are a cache miss, said as
// a warning: the run builds in full and succeeds.
func TestDamagedInputsCacheRebuilds(t *testing.T) {
	c := newCLI(t)
	dir := fixture(t, "plain")
	args := []string{"--name", "damaged", "--path", dir, "-n", c.ns}
	if o, r := c.apply(args...); o.code != exitOK {
		t.Fatalf("first apply: %s: %s", r.Reason, r.Message)
	}
	secrets := cluster.Client(t).CoreV1().Secrets(c.ns)
	s, err := secrets.Get(t.Context(), inventory.SecretName("damaged"), metav1.GetOptions{})
	if err != nil || len(s.Data["inputs.json.gz"]) == 0 {
		t.Fatalf("inventory without cached inputs: %v", err)
	}
	s.Data["inputs.json.gz"] = s.Data["inputs.json.gz"][:len(s.Data["inputs.json.gz"])/2]
	if _, err := secrets.Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	o, r := c.apply(args...)
	if o.code != exitOK || r.Reason != result.ReasonApplySucceed {
		t.Fatalf("apply over damaged inputs: exit %d %s: %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "warning", o.stderr, "warning: inventory Secret "+c.ns+"/"+inventory.SecretName("damaged")+": reading inputs.json.gz", "built and checked in full", "building")
	if s, _ = secrets.Get(t.Context(), inventory.SecretName("damaged"), metav1.GetOptions{}); len(s.Data["inputs.json.gz"]) == 0 {
		t.Error("the successful apply did not record the inputs again")
	}
	if o, _ := c.apply(args...); strings.Contains(o.stderr, "warning") {
		t.Errorf("the warning stays after the inputs were recorded again:\n%s", o.stderr)
	}
}

// crdUnit writes a unit that brings its own CRD and Namespace, with a
// custom resource and a Deployment in that Namespace, as Flux's own
// install manifests do; names are suffixed by tag.
func crdUnit(t *testing.T, dir, tag string) (ns, crd string) {
	ns, group := "crd-ns-"+tag, tag+".example.com"
	crd = "widgets." + group
	writeFile(t, filepath.Join(dir, "namespace.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n")
	writeFile(t, filepath.Join(dir, "crd.yaml"), widgetCRD(group))
	writeFile(t, filepath.Join(dir, "widget.yaml"), "apiVersion: "+group+"/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: "+ns+"\nspec:\n  size: 3\n")
	writeFile(t, filepath.Join(dir, "deployment.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller
  namespace: `+ns+`
spec:
  replicas: 1
  selector:
    matchLabels: {app: controller}
  template:
    metadata:
      labels: {app: controller}
    spec:
      containers:
      - name: controller
        image: registry.example/controller:1
`)
	return ns, crd
}

// Deleting a unit that holds CRDs and a Namespace removes everything:
// the Namespace's check for foreign objects does not trip over the kinds
// whose CRDs just went, nor count what the unit's own objects created
// (ReplicaSets, Pods, the default ServiceAccount). The same when they
// leave Git together and are pruned.
func TestCRDsAndTheirNamespaceGoTogether(t *testing.T) {
	c := newCLI(t)
	k8s := cluster.Client(t)
	gone := func(what, ns, crd string) {
		t.Helper()
		if n, err := k8s.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err == nil && n.DeletionTimestamp == nil {
			t.Errorf("%s: namespace %s is still there", what, ns)
		}
		kc, err := kube.New(cluster.Config, c.ns, kube.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		if err := kc.Client.Get(t.Context(), client.ObjectKey{Name: crd}, u); err == nil && u.GetDeletionTimestamp() == nil {
			t.Errorf("%s: CRD %s is still there", what, crd)
		}
	}

	dir := t.TempDir()
	ns, crd := crdUnit(t, dir, c.ns)
	if o, r := c.apply("--name", "with-crds", "--path", dir); o.code != exitOK {
		t.Fatalf("apply: %s: %s", r.Reason, r.Message)
	}
	if o := c.run("delete", "--name", "with-crds"); o.code != exitOK {
		t.Fatalf("delete: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	gone("delete", ns, crd)

	dir = t.TempDir()
	ns, crd = crdUnit(t, dir, c.ns+"-p")
	writeFile(t, filepath.Join(dir, "stays.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stays\n  namespace: "+c.ns+"\n")
	if o, r := c.apply("--name", "pruned-crds", "--path", dir); o.code != exitOK {
		t.Fatalf("apply: %s: %s", r.Reason, r.Message)
	}
	for _, f := range []string{"namespace.yaml", "crd.yaml", "widget.yaml", "deployment.yaml"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if o, r := c.apply("--name", "pruned-crds", "--path", dir); o.code != exitOK {
		t.Fatalf("prune: %s: %s\n%s", r.Reason, r.Message, o.stdout)
	}
	gone("prune", ns, crd)
}

// recreates reports whether r's entry for id says it needs recreation.
func recreates(r *result.Result, id string) bool {
	for _, e := range r.Entries {
		if e.Object.String() == id {
			return e.Recreate
		}
	}
	return false
}

// diff runs diff --output json and decodes the result.
func (c *cli) diff(args ...string) (outcome, *result.Result) {
	c.t.Helper()
	o := c.run(append([]string{"diff", "--output", "json"}, args...)...)
	var r result.Result
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		c.t.Fatalf("diff printed no JSON (exit %d): %v\n%s\n%s", o.code, err, o.stdout, o.stderr)
	}
	return o, &r
}
