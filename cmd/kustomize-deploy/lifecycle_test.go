package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/lock"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// configMapDir writes a unit of one ConfigMap with data value v.
func configMapDir(t *testing.T, dir, name, v string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "cm.yaml"), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  v: %q\n", name, v))
}

func (c *cli) configMapValue(name string) string {
	c.t.Helper()
	cm, err := cluster.Client(c.t).CoreV1().ConfigMaps(c.ns).Get(c.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return cm.Data["v"]
}

func TestSuspendAndResume(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	configMapDir(t, dir, "settings", "one")
	args := []string{"--name", "susp", "--path", dir, "--target-namespace", c.ns}
	if o, r := c.apply(args...); o.code != exitOK {
		t.Fatalf("%s: %s", r.Reason, r.Message)
	}
	if o := c.run("suspend", "--name", "susp"); o.code != exitOK || !strings.Contains(o.stdout, "unit susp suspended") {
		t.Fatalf("suspend: exit %d %s %s", o.code, o.stdout, o.stderr)
	}
	contains(t, "status", c.run("status").stdout, "SUSPENDED", "true")
	configMapDir(t, dir, "settings", "two")
	o, r := c.apply(args...)
	if o.code != exitOK || r.Reason != result.ReasonSuspended || !r.Ready {
		t.Fatalf("a suspended unit: exit %d, %s %q", o.code, r.Reason, r.Message)
	}
	d := c.run(append([]string{"diff", "--output", "json"}, args...)...)
	contains(t, "diff of a suspended unit", d.stdout, string(result.ReasonSuspended))
	if v := c.configMapValue("settings"); v != "one" {
		t.Errorf("a suspended unit was applied: %q", v)
	}
	if o := c.run("resume", "--name", "susp"); o.code != exitOK {
		t.Fatalf("resume: %s", o.stderr)
	}
	if o, r := c.apply(args...); o.code != exitOK || r.Reason != result.ReasonApplySucceed {
		t.Fatalf("after resume: %s %s", r.Reason, r.Message)
	}
	if v := c.configMapValue("settings"); v != "two" {
		t.Errorf("after resume the unit was not applied: %q", v)
	}
}

func TestPinHoldsOneRevision(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	configMapDir(t, dir, "settings", "one")
	args := []string{"--name", "pinned", "--path", dir, "--target-namespace", c.ns}
	if o, r := c.apply(append(args, "--revision", "rev-1")...); o.code != exitOK {
		t.Fatalf("%s: %s", r.Reason, r.Message)
	}
	if o := c.run("pin", "--name", "pinned", "--revision", "rev-1"); o.code != exitOK {
		t.Fatalf("pin: %s", o.stderr)
	}
	if o := c.run("pin", "--name", "pinned"); o.code != exitUsage {
		t.Errorf("pin without --revision: exit %d", o.code)
	}
	configMapDir(t, dir, "settings", "two")
	o, r := c.apply(append(args, "--revision", "rev-2")...)
	if o.code != exitOK || r.Reason != result.ReasonPinned || !strings.Contains(r.Message, "pinned to revision rev-1") {
		t.Fatalf("a pinned unit: exit %d %s %q", o.code, r.Reason, r.Message)
	}
	if v := c.configMapValue("settings"); v != "one" {
		t.Errorf("a pinned unit was applied at another revision: %q", v)
	}
	contains(t, "status", c.run("status").stdout, "(pinned to rev-1)")
	if o := c.run("unpin", "--name", "pinned"); o.code != exitOK {
		t.Fatal(o.stderr)
	}
	if _, r := c.apply(append(args, "--revision", "rev-2")...); r.Reason != result.ReasonApplySucceed || c.configMapValue("settings") != "two" {
		t.Errorf("after unpin: %s", r.Reason)
	}
}

// A run of an older commit than the one applied is refused (a slow
// workflow run must not roll back a newer deploy), unless allowed.
func TestOlderRevisionIsRefused(t *testing.T) {
	c := newCLI(t)
	repo := t.TempDir()
	git := func(date string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE="+date, "GIT_AUTHOR_DATE="+date,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("", "init", "-q")
	configMapDir(t, repo, "settings", "old")
	git("2026-11-20T10:00:00Z", "add", "-A")
	git("2026-11-20T10:00:00Z", "commit", "-q", "-m", "old")
	old := git("", "rev-parse", "HEAD")
	configMapDir(t, repo, "settings", "new")
	git("2026-11-21T10:00:00Z", "commit", "-q", "-am", "new")
	args := []string{"--name", "order", "--path", repo, "--target-namespace", c.ns}
	if o, r := c.apply(args...); o.code != exitOK {
		t.Fatalf("%s: %s", r.Reason, r.Message)
	}
	inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, "order")
	if inv.Status.LastAppliedRevisionTime == nil {
		t.Fatal("the applied revision's commit time was not recorded")
	}
	git("", "checkout", "-q", old) // a slow run of the older commit
	o, r := c.apply(args...)
	if o.code != exitOK || r.Reason != result.ReasonOutOfOrder || !strings.Contains(r.Message, "is older than the applied revision") {
		t.Fatalf("older revision: exit %d %s %q", o.code, r.Reason, r.Message)
	}
	if v := c.configMapValue("settings"); v != "new" {
		t.Errorf("an older revision rolled the deploy back: %q", v)
	}
	if o, r := c.apply(append(args, "--allow-rollback")...); o.code != exitOK || c.configMapValue("settings") != "old" {
		t.Errorf("--allow-rollback: %s %q", r.Reason, r.Message)
	}
}

// Two applies of one unit at once, with different content: they wait for
// each other's lock; both end consistent, and the inventory covers every
// object labelled as the unit's. (Before the lock and the conflict-safe
// inventory write, both succeeded and the first run's objects ended up in
// no inventory.)
func TestConcurrentAppliesLeaveNoOrphans(t *testing.T) {
	c := newCLI(t)
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for i, dir := range dirs {
		for j := range 30 {
			writeFile(t, filepath.Join(dir, fmt.Sprintf("cm-%d-%02d.yaml", i, j)), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: run%d-%02d\n", i, j))
		}
	}
	// A third run holds the lock for two seconds while both start, so
	// that they contend for it once it expires.
	k := runtimeClient(t)
	now := metav1.NewMicroTime(time.Now())
	held := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: lock.Name("race")},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("run-0"), LeaseDurationSeconds: ptr.To(int32(2)), AcquireTime: &now, RenewTime: &now},
	}
	if err := k.Create(t.Context(), held); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outs := make([]outcome, 2)
	for i, dir := range dirs {
		wg.Go(func() {
			outs[i] = c.run("apply", "--name", "race", "--path", dir, "--target-namespace", c.ns, "--output", "json", "--timeout", "60s")
		})
	}
	wg.Wait()
	for i, o := range outs {
		if o.code != exitOK {
			t.Errorf("run %d: exit %d\n%s\n%s", i, o.code, o.stdout, o.stderr)
		}
	}
	inv, err := inventory.Load(t.Context(), k, c.ns, "race")
	if err != nil || inv == nil {
		t.Fatalf("inventory %v %v", inv, err)
	}
	owned := map[string]bool{}
	for _, e := range inv.Entries {
		owned[e.Name] = true
	}
	var cms corev1.ConfigMapList
	if err := k.List(t.Context(), &cms, client.InNamespace(c.ns), client.MatchingLabels(apply.OwnerLabels("race", c.ns))); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if !owned[cm.Name] {
			t.Errorf("ConfigMap %s carries the unit's labels but is in no inventory: an orphan", cm.Name)
		}
	}
	if len(cms.Items) != 30 {
		t.Errorf("%d labelled ConfigMaps, want the 30 of the run that went last (it pruned the other's)", len(cms.Items))
	}
	if h := leaseHolder(t, c.ns, "race"); h != "" {
		t.Errorf("the lock is still held by %q", h)
	}
}

func leaseHolder(t *testing.T, ns, unit string) string {
	var l coordinationv1.Lease
	if err := runtimeClient(t).Get(t.Context(), client.ObjectKey{Namespace: ns, Name: lock.Name(unit)}, &l); err != nil {
		return ""
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}
