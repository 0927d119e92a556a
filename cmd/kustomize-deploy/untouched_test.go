package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// untouchedFixture writes three ConfigMaps, a Service and a Secret:
// objects no controller writes to after the apply, so their
// resourceVersions only move when someone edits them.
func untouchedFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(dir, name+".yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+"\ndata:\n  value: "+name+"\n")
	}
	writeFile(t, filepath.Join(dir, "svc.yaml"), "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector:\n    app: web\n  ports:\n  - port: 80\n")
	writeFile(t, filepath.Join(dir, "secret.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: "+weakPassword+"\n")
	return dir
}

// touchDir adds a file that is no manifest to dir, so the next run cannot
// reuse the last build (its directory changed) and checks object by object.
func touchDir(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "NOTES.md"), t.Name()+time.Now().String())
}

// editByHand changes ConfigMap name's value, as kubectl edit would.
func editByHand(t *testing.T, ns, name string) {
	t.Helper()
	cms := cluster.Client(t).CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["value"] = "edited by hand"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// countedApply applies and returns the result and the requests it made.
func (c *cli) countedApply(args ...string) (*result.Result, kube.RequestCount) {
	c.t.Helper()
	_, r, n := c.countedApplyOutput(args...)
	return r, n
}

func (c *cli) countedApplyOutput(args ...string) (outcome, *result.Result, kube.RequestCount) {
	c.t.Helper()
	path := filepath.Join(c.t.TempDir(), "requests.json")
	c.env[countRequestsEnv] = path
	defer delete(c.env, countRequestsEnv)
	o, r := c.apply(args...)
	if o.code != exitOK {
		c.t.Fatalf("apply exited %d: %s\n%s", o.code, r.Message, o.stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		c.t.Fatal(err)
	}
	var n kube.RequestCount
	if err := json.Unmarshal(data, &n); err != nil {
		c.t.Fatal(err)
	}
	return o, r, n
}

// weakPassword is the kind of value a digest in the inventory would give
// away to an offline guess.
const weakPassword = "hunter2"

func TestUntouchedObjectsAreNeitherDryRunNorApplied(t *testing.T) {
	c := newCLI(t)
	dir := untouchedFixture(t)
	args := []string{"--name", "fast", "--path", dir, "--target-namespace", c.ns, "--wait=false"}
	c.countedApply(args...)

	touchDir(t, dir)
	r, n := c.countedApply(args...)
	wantActions(t, r, map[string]result.Action{
		"ConfigMap/" + c.ns + "/a": result.Unchanged, "ConfigMap/" + c.ns + "/b": result.Unchanged,
		"ConfigMap/" + c.ns + "/c": result.Unchanged, "Service/" + c.ns + "/web": result.Unchanged,
	})
	// Only the Secret is dry-run: it has no digest (below).
	if n.ByMethod["PATCH dryRun"] != 1 || n.ByMethod["PATCH"] != 0 {
		t.Errorf("a re-run of an untouched unit dry-ran or applied more than its Secret: %+v", n.ByMethod)
	}

	// The inventory records, per object, the digest of its manifest and the
	// resourceVersion the live object has.
	rc := runtimeClient(t)
	inv, err := inventory.Load(t.Context(), rc, c.ns, "fast")
	if err != nil || inv == nil {
		t.Fatalf("inventory: %v", err)
	}
	client := cluster.Client(t)
	for _, e := range inv.Entries {
		if e.Kind == "Secret" {
			if e.Digest != "" {
				t.Errorf("%s: the inventory holds a digest of a Secret's values", e.ID)
			}
			continue
		}
		if e.Digest == "" || e.ResourceVersion == "" {
			t.Errorf("%s: inventory entry %+v lacks a digest or resourceVersion", e.ID, e)
			continue
		}
		var rv string
		if e.Kind == "Service" {
			s, err := client.CoreV1().Services(c.ns).Get(t.Context(), e.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rv = s.ResourceVersion
		} else {
			cm, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), e.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rv = cm.ResourceVersion
		}
		if rv != e.ResourceVersion {
			t.Errorf("%s: inventory says resourceVersion %s, live is %s", e.ID, e.ResourceVersion, rv)
		}
	}

	// --recheck dry-runs every object again, even with nothing changed.
	r, n = c.countedApply(append(args, "--recheck")...)
	if got := n.ByMethod["PATCH dryRun"]; got != 5 {
		t.Errorf("--recheck dry-ran %d object(s), want 5 (%+v)", got, n.ByMethod)
	}
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/a": result.Unchanged})
}

func TestEditedDeletedAndChangedObjectsAreStillApplied(t *testing.T) {
	c := newCLI(t)
	dir := untouchedFixture(t)
	args := []string{"--name", "fast", "--path", dir, "--target-namespace", c.ns, "--wait=false"}
	c.countedApply(args...)
	c.countedApply(args...) // records every object as untouched
	cms := cluster.Client(t).CoreV1().ConfigMaps(c.ns)

	// a: edited by hand; b: deleted by hand; c: changed in Git.
	editByHand(t, c.ns, "a")
	if err := cms.Delete(t.Context(), "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "c.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  value: changed in git\n")

	r, n := c.countedApply(args...)
	wantActions(t, r, map[string]result.Action{
		"ConfigMap/" + c.ns + "/a": result.Configured,
		"ConfigMap/" + c.ns + "/b": result.Created,
		"ConfigMap/" + c.ns + "/c": result.Configured,
		"Service/" + c.ns + "/web": result.Unchanged,
	})
	if got := n.ByMethod["PATCH dryRun"]; got != 4 {
		t.Errorf("dry-ran %d object(s), want the 3 that changed and the Secret (%+v)", got, n.ByMethod)
	}
	want := map[string]string{"a": "a", "b": "b", "c": "changed in git"}
	for name, value := range want {
		cm, err := cms.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("ConfigMap %s: %v", name, err)
			continue
		}
		if cm.Data["value"] != value {
			t.Errorf("ConfigMap %s: value %q, want %q", name, cm.Data["value"], value)
		}
	}

	// Stripping the owner labels hides an object from the inventory check:
	// it is dry-run, and its labels come back.
	a, _ := cms.Get(t.Context(), "a", metav1.GetOptions{})
	a.Labels = nil
	if _, err := cms.Update(t.Context(), a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, _ = c.countedApply(args...)
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/a": result.Configured})
	a, _ = cms.Get(t.Context(), "a", metav1.GetOptions{})
	if a.Labels["kustomize-deploy.dev/name"] != "fast" {
		t.Errorf("owner labels not restored: %v", a.Labels)
	}
}

func TestDiffSkipsUntouchedObjectsButShowsEdits(t *testing.T) {
	c := newCLI(t)
	dir := untouchedFixture(t)
	args := []string{"--name", "fast", "--path", dir, "--target-namespace", c.ns}
	c.countedApply(append(args, "--wait=false")...)
	c.countedApply(append(args, "--wait=false")...)
	editByHand(t, c.ns, "a")
	o := c.run(append([]string{"diff"}, args...)...)
	if o.code != exitOK {
		t.Fatalf("diff exited %d, want %d:\n%s\n%s", o.code, exitOK, o.stdout, o.stderr)
	}
	contains(t, "diff output", o.stdout, "edited by hand", "ConfigMap/"+c.ns+"/a")
}

// A run whose build would read what the last apply's read, with every
// object untouched since, builds nothing, dry-runs nothing and applies
// nothing; a manual edit or a changed file brings the build back.
func TestUnchangedInputsAndObjectsSkipTheBuild(t *testing.T) {
	c := newCLI(t)
	dir := untouchedFixture(t)
	args := []string{"--name", "reuse", "--path", dir, "--target-namespace", c.ns, "--wait=false"}
	c.countedApply(args...)

	o, r, n := c.countedApplyOutput(args...)
	for _, e := range r.Entries {
		if e.Action != result.Unchanged {
			t.Errorf("%s: %s, want unchanged", e.Object, e.Action)
		}
	}
	if len(r.Entries) != 5 {
		t.Errorf("%d entries, want the 5 objects", len(r.Entries))
	}
	if n.ByMethod["PATCH dryRun"] != 0 || n.ByMethod["PATCH"] != 0 {
		t.Errorf("a run with nothing changed dry-ran or applied: %+v", n.ByMethod)
	}
	contains(t, "progress", o.stderr, "unchanged since the last apply")
	if strings.Contains(o.stderr, "building ") {
		t.Errorf("the unit was built although nothing changed:\n%s", o.stderr)
	}

	// A manual edit: the objects are checked, the edit corrected.
	editByHand(t, c.ns, "a")
	r, _ = c.countedApply(args...)
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/a": result.Configured, "ConfigMap/" + c.ns + "/b": result.Unchanged})

	// A changed file: built again.
	writeFile(t, filepath.Join(dir, "b.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  value: changed in git\n")
	r, _ = c.countedApply(args...)
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/b": result.Configured, "ConfigMap/" + c.ns + "/a": result.Unchanged})

	// Other options build again too.
	r, _ = c.countedApply(append(args, "--label", "team=shop")...)
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/b": result.Configured})
	b, _ := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "b", metav1.GetOptions{})
	if b.Labels["team"] != "shop" {
		t.Errorf("a new --label was not applied: %v", b.Labels)
	}

	// diff reuses it as well.
	c.countedApply(append(args, "--label", "team=shop")...)
	d := c.run("diff", "--name", "reuse", "--path", dir, "--target-namespace", c.ns, "--label", "team=shop")
	if d.code != exitOK {
		t.Fatalf("diff exited %d: %s", d.code, d.stderr)
	}
	contains(t, "diff progress", d.stderr, "unchanged since the last apply")
}

// A rollout moves a Deployment's resourceVersion through its status only;
// after waiting for it, the run records the settled version, so the next
// run has nothing to check twice and reuses the build.
func TestRolloutStatusIsNotMistakenForAnEdit(t *testing.T) {
	c := newCLI(t)
	dir := fixture(t, "plain")
	args := []string{"--name", "rollout", "--path", dir, "--target-namespace", c.ns}
	c.countedApply(args...)
	o, r, n := c.countedApplyOutput(args...)
	contains(t, "progress", o.stderr, "unchanged since the last apply")
	if n.ByMethod["PATCH dryRun"] != 0 {
		t.Errorf("the run after a rollout dry-ran %d object(s): %+v", n.ByMethod["PATCH dryRun"], n.ByMethod)
	}
	wantActions(t, r, map[string]result.Action{"Deployment/" + c.ns + "/web": result.Unchanged})
}

// The Action passes paths relative to the workspace: reuse must not
// depend on the path being absolute.
func TestRelativePathIsReused(t *testing.T) {
	c := newCLI(t)
	dir := untouchedFixture(t)
	t.Chdir(dir)
	args := []string{"--name", "relative", "--path", ".", "--target-namespace", c.ns, "--wait=false"}
	c.countedApply(args...)
	o, _, n := c.countedApplyOutput(args...)
	contains(t, "progress", o.stderr, "unchanged since the last apply")
	if n.ByMethod["PATCH dryRun"] != 0 {
		t.Errorf("a re-run from a relative path dry-ran: %+v", n.ByMethod)
	}
}
