package helm

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// edgeChart renders what Helm's sorter and splitter treat specially: kinds
// out of install order and unknown ones, several documents in a file (one
// glued to its separator, one of comments only), a List, a partial, notes,
// block scalars at a document's end, hooks of every kind (weights, delete
// policies, a Helm 2 test-success, an unknown event Helm skips, hooks of
// the same weight), and objects with and without a namespace.
var edgeChart = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: edge\nversion: 0.1.0\n",
	"values.yaml": "n: 3\n",
	"crds/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.edge.example
spec:
  group: edge.example
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`,
	"templates/_helpers.tpl": `{{- define "edge.name" -}}edge-{{ .Release.Name }}{{- end -}}`,
	"templates/NOTES.txt":    "installed {{ .Release.Name }}\n",
	"templates/many.yaml": `{{- range $i := until (int .Values.n) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "edge.name" $ }}-{{ $i }}
data:
  last: |
    line {{ $i }}
{{- end }}
---
# only a comment
---apiVersion: v1
kind: Service
metadata:
  name: glued
spec:
  ports: [{port: 80}]
---
apiVersion: edge.example/v1
kind: Widget
metadata:
  name: w
---
apiVersion: zeta.example/v1
kind: Zeta
metadata:
  name: z
---
apiVersion: v1
kind: Namespace
metadata:
  name: edge-extra
`,
	"templates/list.yaml": `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: listed-a}
  stringData: {k: v}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: listed-b}
  rules: []
`,
	"templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: elsewhere
  annotations:
    note: "kept"
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "web:{{ .Chart.Version }}"}]}
`,
	"templates/hooks.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: b-migrate
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
    "helm.sh/hook-weight": "5"
    "helm.sh/hook-delete-policy": " Hook-Succeeded , before-hook-creation"
spec:
  template: {spec: {restartPolicy: Never, containers: [{name: m, image: m}]}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: a-config
  annotations:
    "helm.sh/hook": pre-install
    "helm.sh/hook-weight": "5"
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: early
  annotations:
    "helm.sh/hook": post-install
    "helm.sh/hook-weight": "-3"
---
apiVersion: v1
kind: Pod
metadata:
  name: tested
  annotations:
    "helm.sh/hook": test-success
spec: {containers: [{name: t, image: t}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: unknown-event
  annotations:
    "helm.sh/hook": pre-install,on-a-whim
spec: {containers: [{name: t, image: t}]}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: weight-not-a-number
  annotations:
    "helm.sh/hook": post-upgrade
    "helm.sh/hook-weight": "heavy"
`,
	"templates/empty.yaml":      "{{- if false }}\nkind: Nothing\n{{- end }}\n",
	"templates/sub/nested.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nested\ndata:\n  folded: >\n    a\n    b\n\n\n",
}

// badCharts fail to render or to be read, each its own way: render's
// error must be Install's.
var badCharts = map[string]map[string]string{
	"not-yaml": {
		"Chart.yaml":          "apiVersion: v2\nname: notyaml\nversion: 0.1.0\n",
		"templates/bad.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n",
		"templates/good.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n",
	},
	"annotation-not-a-string": {
		"Chart.yaml":         "apiVersion: v2\nname: annotation\nversion: 0.1.0\n",
		"templates/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n  annotations:\n    replicas: 3\n",
	},
	"no-kind": {
		"Chart.yaml":         "apiVersion: v2\nname: nokind\nversion: 0.1.0\n",
		"templates/bad.yaml": "apiVersion: v1\nmetadata:\n  name: n\n",
	},
	"fails": {
		"Chart.yaml":         "apiVersion: v2\nname: fails\nversion: 0.1.0\n",
		"templates/bad.yaml": `{{ fail "no way" }}`,
	},
	"kube-version": {
		"Chart.yaml":        "apiVersion: v2\nname: kubeversion\nversion: 0.1.0\nkubeVersion: '< 1.20.0'\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n",
	},
	"schema": {
		"Chart.yaml":         "apiVersion: v2\nname: schema\nversion: 0.1.0\n",
		"values.yaml":        "port: eighty\n",
		"values.schema.json": `{"type": "object", "properties": {"port": {"type": "integer"}}}`,
		"templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n",
	},
	"hook-list": {
		"Chart.yaml":          "apiVersion: v2\nname: hooklist\nversion: 0.1.0\n",
		"templates/hook.yaml": "apiVersion: v1\nkind: List\nmetadata:\n  annotations: {\"helm.sh/hook\": pre-install}\nitems: []\n",
	},
}

// chartDirs are every chart of the repository's testdata, make bench's
// charts and the charts above, by name.
func chartDirs(t testing.TB) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	root := filepath.Join("..", "..")
	for _, pattern := range []string{"testdata/charts/*/Chart.yaml", "testdata/bad/*/unit/Chart.yaml", "cmd/kustomize-deploy/testdata/*/charts/*/Chart.yaml"} {
		found, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			dir := filepath.Dir(f)
			rel, _ := filepath.Rel(root, dir)
			if strings.Contains(rel, "render-over-limit") || strings.Contains(rel, "tpl-recursion") || strings.Contains(rel, "sequence-bomb") {
				continue // bounds tests of their own (hostile_test.go): rendering them is the point of those, and Helm's unbounded render of them the danger
			}
			dirs[rel] = dir
		}
	}
	tmp := t.TempDir()
	if err := helmtest.WriteBenchCharts(filepath.Join(tmp, "bench")); err != nil {
		t.Fatal(err)
	}
	for name := range helmtest.BenchCharts() {
		dirs["bench/"+name] = filepath.Join(tmp, "bench", name)
	}
	write := func(name string, files map[string]string) {
		for p, body := range files {
			full := filepath.Join(tmp, name, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dirs[name] = filepath.Join(tmp, name)
	}
	write("edge", edgeChart)
	for name, files := range badCharts {
		write("bad/"+name, files)
	}
	return dirs
}

// TestRenderIsHelmsInstall renders every chart of testdata and of make
// bench, and charts made of what Helm's sorter treats specially, with
// Helm's engine (render) and through action.Install (renderViaInstall, the
// way it was done before): the same objects, byte for byte in the same
// order from the same templates, the same hooks, or the same error.
func TestRenderIsHelmsInstall(t *testing.T) {
	dirs := chartDirs(t)
	if len(dirs) < 15 {
		t.Fatalf("found %d charts: testdata moved?", len(dirs))
	}
	releases := map[string]func(*Release) (upgrade bool){
		"install": func(*Release) bool { return false },
		"upgrade with tests and CRDs replaced": func(r *Release) bool {
			r.Test.Enable, r.CRDs = true, CRDsCreateReplace
			return true
		},
		"hooks disabled, CRDs skipped, no schema": func(r *Release) bool {
			r.DisableHooks, r.CRDs, r.DisableSchemaValidation = true, CRDsSkip, true
			return false
		},
	}
	caps := map[string]Capabilities{
		"helm's defaults": {},
		"a cluster":       {KubeVersion: "v1.37.2", APIVersions: []string{"edge.example/v1", "edge.example/v1/Widget"}},
	}
	for name, dir := range dirs {
		for how, set := range releases {
			for cname, c := range caps {
				t.Run(name+"/"+how+"/"+cname, func(t *testing.T) {
					rel := &Release{Name: "r", Namespace: "flux-system", ReleaseName: "rel", ReleaseNamespace: "apps", CRDs: CRDsCreate}
					upgrade := set(rel)
					vals := map[string]any{"extra": map[string]any{"from": "the release"}}
					want, wantErr := renderViaInstall(context.Background(), rel, loadChart(t, dir), vals, c, upgrade, &templateLookup{})
					got, gotErr := render(context.Background(), rel, loadChart(t, dir), vals, c, upgrade, &templateLookup{})
					if (wantErr != nil) != (gotErr != nil) || wantErr != nil && !sameError(wantErr.Error(), gotErr.Error()) {
						t.Fatalf("errors differ:\n install: %v\n render:  %v", wantErr, gotErr)
					}
					if wantErr != nil {
						return
					}
					if diff := cmp.Diff(renderedText(t, want), renderedText(t, got)); diff != "" {
						t.Errorf("render differs from action.Install (-install +render):\n%s", diff)
					}
					if diff := cmp.Diff(want.Templates, got.Templates); diff != "" {
						t.Errorf("templates differ (-install +render):\n%s", diff)
					}
				})
			}
		}
	}
}

// sameError says whether render's error says what Install's does. The
// hook a chart holds as a List is refused by both, each in its words.
func sameError(install, render string) bool {
	if strings.Contains(install, "a hook is one object") {
		return strings.Contains(render, "a hook is one object")
	}
	return install == render
}

// renderedText is r as text: its objects in order, then its hooks with
// their path, events, weight and policies.
func renderedText(t testing.TB, r *Rendered) string {
	t.Helper()
	data, err := object.ToYAML(r.Objects)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(data)
	for _, h := range r.Hooks {
		hd, err := object.ToYAML([]*unstructured.Unstructured{h.Object})
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("# hook " + h.Path + " " + strings.Join(h.Events, ",") + " " + strings.Join(h.DeletePolicies, ",") + "\n")
		b.WriteString("# weight " + strconv.Itoa(h.Weight) + "\n")
		b.WriteString(hd)
	}
	return b.String()
}

func loadChart(t testing.TB, dir string) *chart.Chart {
	t.Helper()
	ch, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// BenchmarkRender renders make bench's chart of 300 objects (100 each of
// Deployments, Services and ConfigMaps, through helpers, toYaml and
// checksums) into objects, as a run does; BenchmarkRenderViaInstall is
// the way it was done before, for comparison.
func BenchmarkRender(b *testing.B) {
	benchmarkRender(b, render)
}

func BenchmarkRenderViaInstall(b *testing.B) {
	benchmarkRender(b, renderViaInstall)
}

func benchmarkRender(b *testing.B, fn func(context.Context, *Release, *chart.Chart, map[string]any, Capabilities, bool, *templateLookup) (*Rendered, error)) {
	dir := b.TempDir()
	if err := helmtest.WriteBenchCharts(dir); err != nil {
		b.Fatal(err)
	}
	ch := loadChart(b, filepath.Join(dir, helmtest.BenchChartBig))
	rel := &Release{Name: "big", Namespace: "flux-system", ReleaseName: "big", ReleaseNamespace: "apps", CRDs: CRDsCreate}
	b.ReportAllocs()
	for b.Loop() {
		r, err := fn(context.Background(), rel, ch, nil, Capabilities{}, false, &templateLookup{})
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Objects) != 3*helmtest.BenchBigCount {
			b.Fatalf("%d objects, want %d", len(r.Objects), 3*helmtest.BenchBigCount)
		}
	}
}
