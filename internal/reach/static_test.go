package reach

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func tree(t *testing.T, files map[string]string, links map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"

// The read set is what kustomize's fields name, followed through
// kustomizations; a plain directory whole; whatever it cannot follow
// (a remote base, Helm inflation, a field it does not know, a path out
// of the repository) makes it unknown.
func TestStatic(t *testing.T) {
	t.Parallel()
	probes := func(dir string) []string {
		return []string{dir + "/Kustomization", dir + "/kustomization.yaml", dir + "/kustomization.yml"}
	}
	cases := []struct {
		name       string
		files      map[string]string
		links      map[string]string
		dir        string
		components []string
		want       []string // with the unit directory's probes
		unknown    string   // part of the reason
		covers     []string
		misses     []string
	}{
		{name: "a plain directory is read whole", files: map[string]string{"app/a.yaml": cm, "app/sub/b.yaml": cm, "other/c.yaml": cm},
			dir: "app", want: []string{"app"}, covers: []string{"app/new.yaml", "app/sub/b.yaml"}, misses: []string{"other/c.yaml"}},
		{name: "resources, patches and generators' files, wherever they are",
			files: map[string]string{
				"app/kustomization.yaml": "resources: [cm.yaml, ../base]\npatches:\n- path: ../shared/patch.yaml\n- patch: |-\n    - op: add\n      path: /x\n" +
					"configMapGenerator:\n- name: g\n  files: [key=../shared/conf.txt]\n  envs: [../shared/app.env]\nreplacements:\n- path: ../shared/repl.yaml\n",
				"app/cm.yaml": cm, "app/unused.yaml": cm,
				"base/kustomization.yaml": "resources: [a.yaml]\n", "base/a.yaml": cm,
				"shared/patch.yaml": cm, "shared/conf.txt": "x", "shared/app.env": "A=1", "shared/repl.yaml": "[]", "shared/other.yaml": cm,
			},
			dir: "app",
			want: append(append(append(probes("app"), "app/cm.yaml"), probes("base")...), "base/a.yaml",
				"shared/app.env", "shared/conf.txt", "shared/patch.yaml", "shared/repl.yaml"),
			misses: []string{"app/unused.yaml", "shared/other.yaml"}},
		{name: "Flux's components", files: map[string]string{"app/a.yaml": cm, "components/label/kustomization.yaml": "kind: Component\ncommonLabels: {a: b}\n"},
			dir: "app", components: []string{"../components/label"}, want: append([]string{"app"}, probes("components/label")...)},
		{name: "a plugin's configuration: its directory whole, and what goes up from it",
			files: map[string]string{"app/kustomization.yaml": "transformers: [t.yaml]\n", "app/t.yaml": "path: ../x/y.yaml\n", "x/y.yaml": cm},
			dir:   "app", want: []string{"app", "x/y.yaml"}},
		{name: "a symlink leads to its target", files: map[string]string{"shared/a.yaml": cm}, links: map[string]string{"app/a.yaml": "../shared/a.yaml"},
			dir: "app", want: []string{"app", "shared/a.yaml"}},
		{name: "a remote base", files: map[string]string{"app/kustomization.yaml": "resources:\n- github.com/org/repo//base?ref=v1\n"}, dir: "app", unknown: "remote base"},
		{name: "an HTTP resource", files: map[string]string{"app/kustomization.yaml": "resources: [https://example.com/a.yaml]\n"}, dir: "app", unknown: "not a path of the repository"},
		{name: "Helm inflation", files: map[string]string{"app/kustomization.yaml": "helmCharts:\n- name: podinfo\n"}, dir: "app", unknown: "helmCharts"},
		{name: "a field not known", files: map[string]string{"app/kustomization.yaml": "newField: [x]\n"}, dir: "app", unknown: "newField"},
		{name: "out of the repository", files: map[string]string{"app/kustomization.yaml": "resources: [../../outside]\n"}, dir: "app", unknown: "not a path of the repository"},
		{name: "a path going up out of the repository", files: map[string]string{"app/kustomization.yaml": "patches:\n- path: ../../outside.yaml\n"}, dir: "app", unknown: "outside the repository"},
		{name: "a kustomization that does not parse", files: map[string]string{"app/kustomization.yaml": "resources: [\n"}, dir: "app", unknown: "does not parse"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := tree(t, tc.files, tc.links)
			got := Static(root, tc.dir, tc.components)
			if tc.unknown != "" {
				if !strings.Contains(got.Unknown, tc.unknown) {
					t.Errorf("Unknown %q, want it to say %q", got.Unknown, tc.unknown)
				}
				return
			}
			if got.Unknown != "" {
				t.Fatalf("unknown: %s", got.Unknown)
			}
			if diff := cmp.Diff(minimal(tc.want), got.Roots); diff != "" {
				t.Errorf("roots (-want +got):\n%s", diff)
			}
			for _, p := range tc.covers {
				if !got.Covers(p) {
					t.Errorf("%s not covered", p)
				}
			}
			for _, p := range tc.misses {
				if got.Covers(p) {
					t.Errorf("%s covered", p)
				}
			}
		})
	}
}

// What it reads tells whether it may render charts (and from which of
// the repository's paths) or CRDs.
func TestStaticKinds(t *testing.T) {
	t.Parallel()
	root := tree(t, map[string]string{
		"app/release.yaml": "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: p}\nspec:\n  chart:\n    spec:\n      chart: ./charts/podinfo\n      valuesFiles: [./charts/podinfo/values-prod.yaml]\n  valuesFrom:\n  - {kind: ConfigMap, name: v}\n",
		"crds/crd.yaml":    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: w}\n",
		"sub/release.yaml": "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: p}\nspec:\n  chart:\n    spec:\n      chart: ./charts/${name}\n",
	}, nil)
	got := Static(root, "app", nil)
	if !got.Helm || got.CRDs || !got.ValuesFrom || got.ChartPathsUnknown {
		t.Errorf("app: %+v", got)
	}
	if diff := cmp.Diff([]string{"charts/podinfo", "charts/podinfo/values-prod.yaml"}, got.ChartPaths); diff != "" {
		t.Errorf("chart paths (-want +got):\n%s", diff)
	}
	if got := Static(root, "crds", nil); !got.CRDs || got.Helm {
		t.Errorf("crds: %+v", got)
	}
	if got := Static(root, "sub", nil); !got.ChartPathsUnknown {
		t.Errorf("a substituted chart path: %+v", got)
	}
}
