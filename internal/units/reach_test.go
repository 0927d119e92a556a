package units

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/report"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

// reachLayout is a configuration with one unit per kind of input a
// change can reach it by.
var reachLayout = map[string]string{
	"clusters/prod/apps.yaml": kustomization("web", "./apps/web") + "  components: [../../components/label]\n---\n" +
		kustomization("api", "./apps/api"),
	"clusters/prod/subst.yaml": kustomization("subst", "./apps/subst") +
		"  postBuild:\n    substituteFrom:\n    - {kind: ConfigMap, name: cluster-settings}\n",
	"clusters/prod/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-settings, namespace: flux-system}\ndata: {size: small}\n",
	"clusters/prod/infra.yaml":    kustomization("infra", "./infra") + "---\n" + kustomization("widgets", "./widgets", "infra"),
	"clusters/prod/tenants.yaml":  kustomization("tenants", "./tenants"),
	"clusters/prod/releases.yaml": kustomization("releases", "./releases"),

	"apps/web/kustomization.yaml":         "resources: [deploy.yaml]\npatches:\n- path: ../shared/patch.yaml\n",
	"apps/web/deploy.yaml":                strings.Replace(configMap, "settings", "web", 1),
	"apps/shared/patch.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {patched: \"yes\"}\n",
	"apps/shared/unused.yaml":             configMap,
	"components/label/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels: {team: web}\n",
	"apps/api/cm.yaml":                    strings.Replace(configMap, "settings", "api", 1),
	"apps/subst/cm.yaml":                  strings.Replace(configMap, "small", "\"${size}\"", 1),
	"infra/crd.yaml":                      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n",
	"widgets/widget.yaml":                 "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
	"tenants/tenant-a.yaml":               kustomization("tenant-a", "./apps/tenant-a"),
	"tenants/tenant-b.yaml":               kustomization("tenant-b", "./apps/tenant-b"),
	"apps/tenant-a/cm.yaml":               configMap,
	"apps/tenant-b/cm.yaml":               configMap,
	"releases/release.yaml": "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: flux-system}\n" +
		"spec:\n  interval: 10m\n  chart:\n    spec:\n      chart: ./charts/podinfo\n      sourceRef: {kind: GitRepository, name: flux-system}\n",
	"charts/podinfo/Chart.yaml":  "apiVersion: v2\nname: podinfo\nversion: 1.0.0\n",
	"charts/podinfo/values.yaml": "replicas: 1\n",
	"README.md":                  "# the fleet\n",
}

// Each kind of input a build reads, changed, reaches the units that read
// it, and only those: a unit's files (its directory, a component, a patch
// it names from elsewhere), its own Kustomization (in its file, or as its
// parent emits it), the ConfigMap it substitutes from, a chart's files,
// a CRD (with the units that depend on it), a new unit. A file no build
// reads, a comment, reaches none.
func TestReachRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		change  map[string]string // file → new content; "" removes it
		reached []string
	}{
		{"a unit's own file", map[string]string{"apps/web/deploy.yaml": strings.Replace(configMap, "settings", "web-2", 1)}, []string{"web"}},
		{"a component", map[string]string{"components/label/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels: {team: api}\n"}, []string{"web"}},
		{"a patch named from another directory", map[string]string{"apps/shared/patch.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {patched: \"no\"}\n"}, []string{"web"}},
		{"a file beside that patch no build names", map[string]string{"apps/shared/unused.yaml": ""}, nil},
		{"one Kustomization of a file of several", map[string]string{"clusters/prod/apps.yaml": reachLayout["clusters/prod/apps.yaml"] + "  targetNamespace: api\n"}, []string{"api"}},
		{"a comment in a Kustomization's file", map[string]string{"clusters/prod/apps.yaml": "# reviewed\n" + reachLayout["clusters/prod/apps.yaml"]}, nil},
		{"the ConfigMap a unit substitutes from", map[string]string{"clusters/prod/settings.yaml": strings.Replace(reachLayout["clusters/prod/settings.yaml"], "small", "large", 1)}, []string{"subst"}},
		{"a CRD, and the units depending on it", map[string]string{"infra/crd.yaml": reachLayout["infra/crd.yaml"] + "spec: {group: example.com}\n"}, []string{"infra", "widgets"}},
		{"a Kustomization another unit emits", map[string]string{"tenants/tenant-a.yaml": kustomization("tenant-a", "./apps/tenant-a") + "  targetNamespace: a\n"}, []string{"tenant-a", "tenants"}},
		{"a unit's file another unit emits", map[string]string{"apps/tenant-b/cm.yaml": strings.Replace(configMap, "small", "big", 1)}, []string{"tenant-b"}},
		{"a chart's values", map[string]string{"charts/podinfo/values.yaml": "replicas: 2\n"}, []string{"releases"}},
		{"a file no build reads", map[string]string{"README.md": "# the fleet, reviewed\n"}, nil},
		{"a new unit", map[string]string{"clusters/prod/new.yaml": kustomization("new", "./apps/api")}, []string{"new"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := reachedBy(t, reachLayout, tc.change)
			if diff := cmp.Diff(tc.reached, got); diff != "" {
				t.Errorf("units reached (-want +got):\n%s", diff)
			}
		})
	}
}

// reachedBy commits files, applies change to the work tree, and returns
// the units an offline diff against that commit renders, sorted.
func reachedBy(t *testing.T, files, change map[string]string) []string {
	t.Helper()
	root, base := committed(t, files)
	for f, content := range change {
		p := filepath.Join(root, filepath.FromSlash(f))
		if content == "" {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	revs := &checkout.Worktrees{}
	t.Cleanup(revs.Close)
	run, err := Open(t.Context(), Spec{Path: filepath.Join(root, "clusters/prod"), Root: root, Unit: spec.Default(), Cluster: offline, Base: base, At: revs.Unit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	if run.reach == nil {
		t.Fatalf("no reach worked out: %v", run.Warnings)
	}
	var names []string
	for _, u := range run.Units() {
		names = append(names, u.Options.Name)
	}
	slices.Sort(names)
	return names
}

// committed writes files to a new repository, commits them and returns
// its root (symlinks evaluated) and the commit.
func committed(t *testing.T, files map[string]string) (string, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(repo(t, files))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "base"}} {
		if _, err := checkout.Git(context.Background(), root, args...); err != nil {
			t.Fatal(err)
		}
	}
	sha, err := checkout.Git(context.Background(), root, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return root, sha
}

// An offline diff of a pull request renders only the units its change
// reaches ("3 of 8 units rendered"), each with the diff a render of
// every unit gives it; every unit left out shows no change there.
func TestDiffOfflineRendersOnlyWhatTheChangeReaches(t *testing.T) {
	t.Parallel()
	files := maps.Clone(reachLayout)
	for f := range files {
		if strings.HasPrefix(f, "releases/") || strings.HasPrefix(f, "charts/") || f == "clusters/prod/releases.yaml" {
			delete(files, f)
		}
	}
	crd, err := os.ReadFile(filepath.Join("..", "validate", "testdata", "crd-widget.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files["infra/crd.yaml"] = string(crd)
	files["widgets/widget.yaml"] = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2}\n"
	root, base := committed(t, files)
	for f, content := range map[string]string{
		"apps/web/deploy.yaml":  strings.Replace(files["apps/web/deploy.yaml"], "small", "large", 1),
		"tenants/tenant-a.yaml": kustomization("tenant-a", "./apps/tenant-a") + "  targetNamespace: a\n",
	} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(f)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	diff := func(all bool) *result.Set {
		revs := &checkout.Worktrees{}
		t.Cleanup(revs.Close)
		run, err := Open(t.Context(), Spec{Path: filepath.Join(root, "clusters/prod"), Root: root, Unit: spec.Default(), Cluster: offline, Base: base, At: revs.Unit, AllUnits: all})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { run.Close() })
		return run.DiffOffline(t.Context())
	}
	reached, every := diff(false), diff(true)
	if every.Reach != nil || len(every.Units) != 8 {
		t.Fatalf("all units: reach %+v, %d units", every.Reach, len(every.Units))
	}
	r := reached.Reach
	if r == nil {
		t.Fatal("no reach on the result")
	}
	wantNot := []string{"api", "infra", "widgets", "subst", "tenant-b"}
	if r.Units != 8 || r.Rendered != 3 || r.NotAffected != 5 || r.ChangedFiles != 2 || !slices.Equal(r.NotAffectedUnits, wantNot) || r.Base != base {
		t.Errorf("reach %+v", r)
	}
	if line := report.ReachText(r); !strings.HasPrefix(line, "3 of 8 units rendered") || !strings.Contains(line, "not affected (5): api, infra, widgets, subst, tenant-b") {
		t.Errorf("line: %s", line)
	}
	got, all := unitsOf(reached), unitsOf(every)
	if len(got) != 3 {
		t.Errorf("units diffed: %v", slices.Sorted(maps.Keys(got)))
	}
	for name, res := range all {
		mine, ok := got[name]
		if !ok {
			if c := res.Counts; c.Created+c.Configured+c.Deleted > 0 || res.Failed() {
				t.Errorf("%s, not rendered, changes in a render of every unit: %+v %s", name, res.Counts, res.Message)
			}
			continue
		}
		if diff := cmp.Diff(res.Entries, mine.Entries); diff != "" || res.Reason != mine.Reason || res.Counts != mine.Counts {
			t.Errorf("%s: %s/%s, entries (-all +reached):\n%s", name, res.Reason, mine.Reason, diff)
		}
	}
	if web := got["web"]; web == nil || web.Counts.Configured != 1 {
		t.Errorf("web: %+v", web)
	}
}

// A unit the change reaches is checked against the CRDs of units it does
// not reach: those that may hold one are rendered for their CRDs only.
func TestDiffOfflineOfAReachedUnitKnowsTheCRDsOfOthers(t *testing.T) {
	t.Parallel()
	crd, err := os.ReadFile(filepath.Join("..", "validate", "testdata", "crd-widget.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: small}\nspec: {size: 2}\n"
	root, base := committed(t, map[string]string{
		"clusters/prod/crds.yaml": kustomization("crds", "./crds"),
		"clusters/prod/apps.yaml": kustomization("apps", "./apps", "crds"),
		"clusters/prod/web.yaml":  kustomization("web", "./web"),
		"crds/widgets.yaml":       string(crd),
		"apps/widget.yaml":        widget,
		"web/cm.yaml":             configMap,
	})
	if err := os.WriteFile(filepath.Join(root, "apps", "widget.yaml"), []byte(strings.Replace(widget, "size: 2", "size: 2, SIZE: 3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	revs := &checkout.Worktrees{}
	t.Cleanup(revs.Close)
	run, err := Open(t.Context(), Spec{Path: filepath.Join(root, "clusters/prod"), Root: root, Unit: spec.Default(), Cluster: offline, Base: base, At: revs.Unit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	set := run.DiffOffline(t.Context())
	if set.Reach == nil || set.Reach.Rendered != 1 || !slices.Equal(set.Reach.NotAffectedUnits, []string{"crds", "web"}) {
		t.Fatalf("reach %+v", set.Reach)
	}
	apps := unitsOf(set)["apps"]
	if apps == nil || apps.Reason != result.ReasonValidationFailed || !strings.Contains(apps.Message, "spec.SIZE: unknown field") {
		t.Errorf("apps %+v", apps)
	}
	if mayHold := run.mayHoldCRDs(run.all[2], run.Set().Units[2]); mayHold {
		t.Errorf("web, a ConfigMap, may hold CRDs")
	}
}
