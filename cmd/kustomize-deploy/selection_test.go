package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
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
	o = c.run("rollback", "--name", "a", "--path", filepath.Join(config, "..", "..", "deploy", "a"), "--allow-rollback")
	if o.code != exitFail || !strings.Contains(o.stderr, "unit 'a' is a unit of the configuration") {
		t.Errorf("rolling back a unit of a configuration alone: exit %d\n%s", o.code, o.stderr)
	}
	o = c.run("apply", "--name", "a", "--path", t.TempDir(), "--abort-on-error")
	if o.code != exitUsage || !strings.Contains(o.stderr, "--abort-on-error stops the units of --config") {
		t.Errorf("--abort-on-error on a single unit: exit %d\n%s", o.code, o.stderr)
	}
	o = c.run("apply", "--config", config, "--include-tag", "two words")
	if o.code != exitUsage || !strings.Contains(o.stderr, `tag "two words"`) {
		t.Errorf("a tag that is no tag: exit %d\n%s", o.code, o.stderr)
	}
}

// Tags on HelmReleases: a release the run's tags leave out is left as it
// is — its changed values not applied, its objects not pruned, its
// record kept — and the next run without tags upgrades it.
func TestTagsLeaveHelmReleasesOut(t *testing.T) {
	c := newCLI(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	write := func(greeting string) {
		t.Helper()
		writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+c.ns+"\nspec:\n  interval: 1h\n  url: "+repo.URL+"\n")
		var b strings.Builder
		for name, tag := range map[string]string{"front": "frontend", "back": "backend"} {
			fmt.Fprintf(&b, "---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: %s\n  namespace: %s\n  annotations: {kustomize-deploy.dev/tags: %s}\n"+
				"spec:\n  interval: 10m\n  chart:\n    spec:\n      chart: web\n      version: 1.0.0\n      sourceRef: {kind: HelmRepository, name: charts}\n  values:\n    greeting: %s\n", name, c.ns, tag, greeting)
		}
		writeFile(t, filepath.Join(dir, "releases.yaml"), b.String())
	}
	greeting := func(release string) string {
		t.Helper()
		cm, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), release+"-settings", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("ConfigMap of %s: %v", release, err)
		}
		return cm.Data["greeting"]
	}
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir()}
	write("hello")
	if o, r := c.apply(args...); o.code != exitOK {
		t.Fatalf("install: exit %d: %s", o.code, r.Message)
	}
	before, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "web")
	if err != nil {
		t.Fatal(err)
	}

	write("bonjour")
	o, r := c.apply(append(args, "--exclude-tag", "backend")...)
	if o.code != exitOK || r.Counts.Deleted != 0 {
		t.Fatalf("apply leaving back out: exit %d, counts %+v: %s", o.code, r.Counts, r.Message)
	}
	if greeting("front") != "bonjour" || greeting("back") != "hello" {
		t.Errorf("front says %q, back %q; want front upgraded, back left as it was", greeting("front"), greeting("back"))
	}
	contains(t, "the note", strings.Join(r.Notes, "\n"), "HelmRelease/"+c.ns+"/back (tags backend) is left out by the run's tags")
	after, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Entries) != len(before.Entries) {
		t.Errorf("the inventory went from %d to %d entries: the left-out release's objects must stay", len(before.Entries), len(after.Entries))
	}
	digest := func(inv *inventory.Inventory, name string) string {
		for _, rel := range inv.Status.Releases {
			if rel.Name == c.ns+"/"+name {
				return rel.Digest
			}
		}
		return ""
	}
	if digest(after, "back") != digest(before, "back") || digest(after, "front") == digest(before, "front") {
		t.Errorf("release records: back %s → %s, front %s → %s; want back's kept, front's new", digest(before, "back"), digest(after, "back"), digest(before, "front"), digest(after, "front"))
	}

	if o, r := c.apply(args...); o.code != exitOK || greeting("back") != "bonjour" {
		t.Errorf("the run without tags: exit %d (%s), back says %q", o.code, r.Message, greeting("back"))
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
	invs, _ := inventory.List(t.Context(), runtimeClient(t), c.ns)
	for _, inv := range invs {
		if inv.Name != "a" {
			t.Errorf("unit %s has an inventory after the aborted run: it was not to start", inv.Name)
		}
	}
	o, s = c.runConfig("apply", "--config", config, "--parallel", "1")
	want = map[string]result.Reason{"a": result.ReasonValidationFailed, "b": result.ReasonApplySucceed, "c": result.ReasonApplySucceed}
	if o.code != exitFail || fmt.Sprint(reasons(s)) != fmt.Sprint(want) {
		t.Errorf("without it: exit %d, %v, want %v", o.code, reasons(s), want)
	}
}
