package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A prune over the budget (--max-prune, --protect) is refused before
// anything is written: the diff fails naming what it would delete, the
// apply changes nothing and deletes nothing; --force-prune goes ahead.
func TestPruneBudget(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	cm := func(name, v string) {
		writeFile(t, filepath.Join(dir, name+".yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+"\ndata:\n  v: \""+v+"\"\n")
	}
	for _, name := range []string{"a", "b", "c"} {
		cm(name, "1")
	}
	args := []string{"--name", "budget", "--path", dir, "-n", c.ns}
	if o, r := c.apply(args...); o.code != exitOK {
		t.Fatalf("first apply: %s %s", r.Reason, r.Message)
	}
	cm("a", "2")
	for _, name := range []string{"b", "c"} {
		if err := os.Remove(filepath.Join(dir, name+".yaml")); err != nil {
			t.Fatal(err)
		}
	}

	for _, budget := range [][]string{{"--max-prune", "1"}, {"--protect", "Namespace,ConfigMap"}} {
		o, d := c.diff(append(args, budget...)...)
		if o.code == exitOK || d.Reason != result.ReasonPruneFailed {
			t.Errorf("diff %v: exit %d reason %s", budget, o.code, d.Reason)
		}
		contains(t, "diff message", d.Message, "ConfigMap/"+c.ns+"/b", "ConfigMap/"+c.ns+"/c")
		o, r := c.apply(append(args, budget...)...)
		if o.code != exitFail || r.Reason != result.ReasonPruneFailed {
			t.Fatalf("apply %v: exit %d reason %s", budget, o.code, r.Reason)
		}
		contains(t, "apply message", r.Message, "refusing to prune 2 object(s)", "nothing was applied", "ConfigMap/"+c.ns+"/b")
		contains(t, "hint", o.stderr, "hint: --force-prune")
		if v := c.configMapValue("a"); v != "1" {
			t.Errorf("a refused apply changed a to %q", v)
		}
		for _, name := range []string{"b", "c"} {
			_ = c.configMapValue(name) // fails the test if deleted
		}
	}
	o, r := c.apply(append(args, "--max-prune", "1", "--force-prune")...)
	if o.code != exitOK {
		t.Fatalf("--force-prune: exit %d %s %s", o.code, r.Reason, r.Message)
	}
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/b": result.Deleted, "ConfigMap/" + c.ns + "/a": result.Configured})
	if o := c.run(append([]string{"apply", "--max-prune", "-1"}, args...)...); o.code != exitUsage {
		t.Errorf("--max-prune -1: exit %d, want a usage error\n%s", o.code, o.stderr)
	}
}
