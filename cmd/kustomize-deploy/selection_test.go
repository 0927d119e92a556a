package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// threeUnits writes a configuration of three independent units, each a
// ConfigMap: a (tagged backend, and invalid when broken), b (frontend)
// and c (backend, slow), in a git repository; it returns the
// configuration's directory.
func threeUnits(t *testing.T, ns string, broken bool) string {
	t.Helper()
	root := t.TempDir()
	tags := map[string]string{"a": "backend", "b": "frontend", "c": "backend, slow"}
	var b strings.Builder
	for _, n := range []string{"a", "b", "c"} {
		fmt.Fprintf(&b, "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: %s\n  namespace: %s\n  annotations: {kustomize-deploy.dev/tags: %q}\n"+
			"spec:\n  interval: 10m\n  path: ./deploy/%s\n  prune: true\n  targetNamespace: %s\n  sourceRef: {kind: GitRepository, name: flux-system}\n", n, ns, tags[n], n, ns)
		data := "  greeting: hello\n"
		if broken && n == "a" {
			data = "  port: 80\n" // not a string: the dry-run refuses it
		}
		writeFile(t, filepath.Join(root, "deploy", n, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+n+"\ndata:\n"+data)
	}
	writeFile(t, filepath.Join(root, "clusters/test/units.yaml"), b.String())
	gitCommit(t, root, "three units")
	return filepath.Join(root, "clusters/test")
}

func reasons(s *result.Set) map[string]result.Reason {
	out := map[string]result.Reason{}
	for _, r := range s.Units {
		out[r.Unit] = r.Reason
	}
	return out
}

// Tags pick units of a three-unit configuration as kluctl's
// --include-tag and --exclude-tag do, for apply, diff and drift; a
// selection of nothing is an error; the units left out are not touched.
func TestTagsSelectUnits(t *testing.T) {
	c := newCLI(t)
	config := threeUnits(t, c.ns, false)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"diff", "--include-tag", "frontend"}, []string{"b"}},
		{[]string{"apply", "--include-tag", "backend", "--exclude-tag", "slow"}, []string{"a"}},
		{[]string{"drift", "--exclude-tag", "backend"}, []string{"b"}},
		{[]string{"apply", "--include-tag", "backend,frontend"}, []string{"a", "b", "c"}},
	} {
		o, s := c.runConfig(append(tc.args, "--config", config)...)
		var got []string
		for _, r := range s.Units {
			got = append(got, r.Unit)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) || o.code != exitOK {
			t.Errorf("%q: units %q (exit %d), want %q\n%s", tc.args, got, o.code, tc.want, o.stderr)
		}
		if tc.args[0] == "apply" && len(tc.want) == 1 {
			if invs, _ := inventory.List(t.Context(), runtimeClient(t), c.ns); len(invs) != 1 {
				t.Errorf("%q: %d inventories, want the one unit's", tc.args, len(invs))
			}
		}
	}
	o := c.run("apply", "--config", config, "--include-tag", "database")
	if o.code == exitOK || !strings.Contains(o.stderr, "no unit of the configuration is selected including tags database (of 3: a, b, c)") {
		t.Errorf("a selection of nothing: exit %d\n%s", o.code, o.stderr)
	}
	o = c.run("apply", "--name", "a", "--path", t.TempDir(), "--include-tag", "backend")
	if o.code != exitUsage || !strings.Contains(o.stderr, "--include-tag picks among the units of --config") {
		t.Errorf("--include-tag on a single unit: exit %d\n%s", o.code, o.stderr)
	}
}

// --abort-on-error stops a three-unit run at its failed unit: the others,
// which do not depend on it, do not start; without it they run.
func TestAbortOnError(t *testing.T) {
	c := newCLI(t)
	config := threeUnits(t, c.ns, true)
	o, s := c.runConfig("apply", "--config", config, "--parallel", "1", "--abort-on-error")
	want := map[string]result.Reason{"a": result.ReasonValidationFailed, "b": result.ReasonCancelled, "c": result.ReasonCancelled}
	if o.code != exitFail || fmt.Sprint(reasons(s)) != fmt.Sprint(want) {
		t.Fatalf("--abort-on-error: exit %d, %v, want %v\n%s", o.code, reasons(s), want, o.stderr)
	}
	for _, r := range s.Units[1:] {
		contains(t, "why "+r.Unit+" did not start", r.Message, "not started: unit a failed, and the run stops at the first failure (abort on error)")
	}
	if invs, _ := inventory.List(t.Context(), runtimeClient(t), c.ns); len(invs) != 1 {
		t.Errorf("%d inventories after the aborted run, want a's only", len(invs))
	}
	o, s = c.runConfig("apply", "--config", config, "--parallel", "1")
	want = map[string]result.Reason{"a": result.ReasonValidationFailed, "b": result.ReasonApplySucceed, "c": result.ReasonApplySucceed}
	if o.code != exitFail || fmt.Sprint(reasons(s)) != fmt.Sprint(want) {
		t.Errorf("without it: exit %d, %v, want %v", o.code, reasons(s), want)
	}
}
