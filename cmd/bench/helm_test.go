package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
)

// serveBenchCharts serves the scenario's charts for the test.
func serveBenchCharts(t *testing.T) *chartRepository {
	t.Helper()
	dir := t.TempDir()
	if err := writeCharts(filepath.Join(dir, "charts")); err != nil {
		t.Fatal(err)
	}
	r, err := serveCharts(filepath.Join(dir, "charts"), filepath.Join(dir, "repository"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// renderRelease renders one HelmRelease of chart from r with
// kustomize-deploy's own Helm path, as the bench's commands do.
func renderRelease(t *testing.T, r *chartRepository, chart, targetNamespace string) *helm.Expanded {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, doc := range []string{helmRepository("flux-system", r.URL), helmRelease(chart, "flux-system", chart, chart, targetNamespace)} {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
	sources := map[object.ID]string{}
	for _, u := range objs {
		sources[object.IDOf(u)] = chart + ".yaml"
	}
	out, err := helm.Expand(t.Context(), objs, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatalf("rendering chart %s: %v", chart, err)
	}
	return out
}

func kinds(objs []*unstructured.Unstructured) map[string]int {
	out := map[string]int{}
	for _, u := range objs {
		out[u.GetKind()]++
	}
	return out
}

// The generated charts render what the scenario counts, served from the
// bench's repository: the big chart its three kinds, the layout's charts
// their Deployments, the certs chart its CRD, Issuer and post-install hook.
func TestBenchChartsRender(t *testing.T) {
	r := serveBenchCharts(t)

	big := kinds(renderRelease(t, r, chartBig, "").Objects)
	for _, kind := range []string{"Deployment", "Service", "ConfigMap"} {
		if big[kind] != helmBigCount {
			t.Errorf("the big chart rendered %d %s(s), want %d (%v)", big[kind], kind, helmBigCount, big)
		}
	}
	if len(big) != 3 {
		t.Errorf("the big chart rendered kinds %v, want only Deployments, Services and ConfigMaps", big)
	}

	for _, chart := range layoutCharts {
		out := renderRelease(t, r, chart, "kd-"+chart)
		got := kinds(out.Objects)
		if got["Deployment"] != layoutDeployments[chart] || got["Namespace"] != 1 {
			t.Errorf("chart %s rendered %v, want %d Deployment(s) and its Namespace", chart, got, layoutDeployments[chart])
		}
		for _, u := range out.Objects {
			if ns := u.GetNamespace(); u.GetKind() != "Namespace" && u.GetKind() != "CustomResourceDefinition" && ns != "kd-"+chart {
				t.Errorf("chart %s: %s %s in namespace %q, want kd-%s", chart, u.GetKind(), u.GetName(), ns, chart)
			}
		}
		if chart != chartCerts {
			continue
		}
		if got["CustomResourceDefinition"] != 1 || got["Issuer"] != 1 {
			t.Errorf("the certs chart rendered %v, want its CRD and an Issuer", got)
		}
		if hooks := out.Charts[0].Hooks; len(hooks) != 1 || !hooks[0].On("post-install") {
			t.Errorf("the certs chart's hooks: %+v, want one post-install Job", hooks)
		}
	}
}

// The scenario's configurations are read by kustomize-deploy's own reader,
// so a field it refuses fails here rather than in the middle of a run.
func TestHelmConfigurationsLoad(t *testing.T) {
	for name, c := range map[string]struct {
		dir   string
		units []helmUnit
	}{"layout": {helmLayoutConfig, layoutUnits("kd")}, "noop": {helmNoopConfig, noopUnits("kd")}} {
		us := c.units
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			config, err := writeHelmRepo(root, c.dir, "http://127.0.0.1:1", us, true)
			if err != nil {
				t.Fatal(err)
			}
			set, dir, err := units.Load(config, root)
			if err != nil {
				t.Fatalf("units.Load: %v", err)
			}
			// A configuration is known by its directory: each its own, so
			// that one never garbage-collects another's units.
			if dir.Rel != c.dir || dir.Rel == multiConfigDir {
				t.Errorf("configuration at %q, want %q (not the many-unit scenario's)", dir.Rel, c.dir)
			}
			if len(set.Units) != len(us) {
				t.Fatalf("%d units, want %d", len(set.Units), len(us))
			}
			releases := 0
			for _, u := range us {
				releases += len(u.Releases)
				files, err := os.ReadDir(filepath.Join(root, "units", u.Name))
				if err != nil {
					t.Fatal(err)
				}
				if len(files) != 1+len(u.Releases) {
					t.Errorf("unit %s has %d files, want its HelmRepository and %d HelmRelease(s)", u.Name, len(files), len(u.Releases))
				}
			}
			want := map[string]int{"layout": len(layoutCharts), "noop": helmNoopUnits}[name]
			if releases != want {
				t.Errorf("%d HelmReleases, want %d", releases, want)
			}
		})
	}
	if us := layoutUnits("kd"); us[1].DependsOn != us[0].Name {
		t.Errorf("the layout's apps depend on %q, want %s", us[1].DependsOn, us[0].Name)
	}
}

func TestMedian(t *testing.T) {
	ms := []measurement{{Wall: 3 * time.Second}, {Wall: time.Second}, {Wall: 2 * time.Second}, {Wall: 9 * time.Second}}
	if got := median(ms); got.Wall != 2*time.Second {
		t.Errorf("median of 3, 1, 2, 9 s is %s, want the lower middle, 2 s", got.Wall)
	}
	if got := median(ms[:3]); got.Wall != 2*time.Second {
		t.Errorf("median of 3, 1, 2 s is %s, want 2 s", got.Wall)
	}
	if got := median(append(ms, measurement{Wall: time.Second, Err: io.EOF})); got.Err == nil {
		t.Error("the median of runs of which one failed did not fail")
	}
	if got := median(nil); got.Wall != 0 || got.Err != nil {
		t.Errorf("median of nothing: %+v", got)
	}
}

func TestRenderedKinds(t *testing.T) {
	stream := "---\n# Source: big/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    kind: Deployment\n---\napiVersion: apps/v1\nkind: Deployment\n"
	got := renderedKinds([]byte(stream))
	if len(got) != 2 || got["ConfigMap"] != 1 || got["Deployment"] != 1 {
		t.Errorf("kinds %v, want one ConfigMap and one Deployment (nested kind: fields not counted)", got)
	}
}

func TestHelmFlagAndNoSizes(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.helm {
		t.Error("the Helm scenario is off by default")
	}
	c, err = parseFlags([]string{"--helm=false", "--sizes", "", "--multi=false"}, io.Discard)
	if err != nil || c.helm || len(c.sizes) != 0 || c.multi {
		t.Errorf("--helm=false --sizes '' --multi=false: helm %t, sizes %v, multi %t, error %v", c.helm, c.sizes, c.multi, err)
	}
}

func TestMarkdownShowsHelmRowsAndTargets(t *testing.T) {
	r := &report{Tools: []string{toolOurs}, Versions: map[string]string{toolOurs: "v1", toolHelm: "v4.3.1"}, Wait: true}
	r.Helm = &helmResult{
		RenderObjects:  300,
		RenderColdOurs: []measurement{{Wall: 900 * time.Millisecond}, {Wall: 500 * time.Millisecond}, {Wall: 700 * time.Millisecond}},
		RenderColdHelm: []measurement{{Wall: 600 * time.Millisecond}, {Wall: 600 * time.Millisecond}, {Wall: 800 * time.Millisecond}},
		RenderOurs:     []measurement{{Wall: 500 * time.Millisecond, MaxRSS: 80 << 20}, {Wall: 300 * time.Millisecond}, {Wall: 400 * time.Millisecond}},
		RenderHelm:     []measurement{{Wall: 500 * time.Millisecond}, {Wall: 500 * time.Millisecond}, {Wall: 700 * time.Millisecond}},
		LayoutHelm:     []measurement{{Wall: 2 * time.Second}, {Wall: 4 * time.Second}, {Wall: 2 * time.Second}},
		LayoutHelmSum:  measurement{Wall: 8 * time.Second},
		LayoutOurs: measurement{Wall: 3 * time.Second, MaxRSS: 100 << 20,
			Requests: &kube.RequestCount{Total: 40, ByMethod: map[string]int{"GET": 10, "PATCH": 30}}},
		NoopFirst: measurement{Wall: 4 * time.Second},
		Noop:      []measurement{{Wall: 1200 * time.Millisecond}, {Wall: 700 * time.Millisecond}, {Wall: 800 * time.Millisecond}},
	}
	md := r.Markdown()
	for _, want := range []string{
		"| helm | v4.3.1 | `helm template --repo`; `helm upgrade --install --repo --create-namespace --timeout 5m --wait` |",
		"## Helm charts",
		"| render 300 objects, cold chart caches (median of 3) | 0.6 s | 0.7 s | 1.17× | – | – |",
		"Cold renders, in order: kustomize-deploy 0.9 s, 0.5 s, 0.7 s; helm 0.6 s, 0.6 s, 0.8 s.",
		"| rendering a chart of 300 objects ≤ 1.0× helm template (cold caches, medians) | 1.17× (0.7 s vs 0.6 s) | no |",
		"| render 300 objects, warm chart caches (median of 3) | 0.5 s | 0.4 s | 0.80× | – | – |",
		"| first deploy of the example layout (3 charts; helm: the sum of its 3 installs) | 8.0 s | 3.0 s | 0.38× | 100 MB | 40 (GET 10, PATCH 30) |",
		"| 10 HelmReleases in 10 units, no-op (median of 3) | – | 0.8 s | – | – | – |",
		"Warm renders, in order: kustomize-deploy 0.5 s, 0.3 s, 0.4 s; helm 0.5 s, 0.5 s, 0.7 s.",
		"helm upgrade --install, one after another: ingress 2.0 s, certs 4.0 s, app 2.0 s.",
		"| rendering a chart of 300 objects ≤ 1.0× helm template (warm caches, medians) | 0.80× (0.4 s vs 0.5 s) | yes |",
		"| first deploy of the example layout (3 charts) ≤ 0.5× helm upgrade --install one after another | 0.38× (3.0 s vs 8.0 s) | yes |",
		"| no-op of 10 HelmReleases (`--config`, warm chart cache) ≤ 1.0 s | 0.8 s (median of 1.2 s, 0.7 s, 0.8 s) | yes |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestMarkdownHelmFailedOrSkippedIsNotMeasured(t *testing.T) {
	for name, h := range map[string]*helmResult{
		"skipped": nil,
		"failed": {
			RenderOurs:    []measurement{{Wall: time.Second, Err: errors.New("exit 1")}},
			RenderHelm:    []measurement{{Wall: time.Second}},
			LayoutOurs:    measurement{Wall: time.Second},
			LayoutHelmSum: measurement{Wall: 5 * time.Second, Err: errors.New("app: exit 1")},
			Noop:          []measurement{{Wall: 500 * time.Millisecond, Err: errors.New("changed unit(s) kd-a01")}},
		},
	} {
		r := &report{Versions: map[string]string{}, Helm: h}
		md := r.Markdown()
		for _, want := range []string{
			"| rendering a chart of 300 objects ≤ 1.0× helm template (warm caches, medians) | not measured | – |",
			"| rendering a chart of 300 objects ≤ 1.0× helm template (cold caches, medians) | not measured | – |",
			"| first deploy of the example layout (3 charts) ≤ 0.5× helm upgrade --install one after another | not measured | – |",
			"| no-op of 10 HelmReleases (`--config`, warm chart cache) ≤ 1.0 s | not measured | – |",
		} {
			if !strings.Contains(md, want) {
				t.Errorf("%s: markdown lacks %q:\n%s", name, want, md)
			}
		}
		if h == nil && strings.Contains(md, "## Helm charts") {
			t.Errorf("%s: the Helm section is shown", name)
		}
	}
}
