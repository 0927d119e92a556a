package helm_test

import (
	"context"
	"encoding/base64"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// chartDir is a test chart of the repository's testdata.
func chartDir(name string) string { return filepath.Join("..", "..", "testdata", "charts", name) }

// objs reads YAML documents into objects, each from file "unit.yaml".
func objs(t *testing.T, docs ...string) ([]*unstructured.Unstructured, map[object.ID]string) {
	t.Helper()
	var out []*unstructured.Unstructured
	sources := map[object.ID]string{}
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		out = append(out, u)
		sources[object.IDOf(u)] = "apps/web/release.yaml"
	}
	return out, sources
}

func repository(url string, extra string) string {
	return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: apps}\nspec:\n  interval: 1h\n  url: " + url + "\n" + extra
}

func release(spec string) string {
	return "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: apps}\nspec:\n  interval: 10m\n" + spec
}

const webChart = "  chart:\n    spec:\n      chart: web\n      version: \"1.x\"\n      sourceRef: {kind: HelmRepository, name: charts}\n"

func ids(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, u := range objs {
		out = append(out, object.IDOf(u).String())
	}
	return out
}

func byKind(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind {
			return u
		}
	}
	return nil
}

// A unit's HelmRelease becomes its chart's objects, rendered with the
// newest version its range allows and values from a Secret of the unit
// merged under spec.values; the HelmRepository is read, not applied; the
// chart's test hooks are left out; and the fields a Secret's value
// landed in are recorded, wherever the templates put them.
func TestExpandRendersAHelmRelease(t *testing.T) {
	repo := helmtest.NewRepository(t,
		helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0"},
		helmtest.Chart{Dir: chartDir("web"), Version: "1.1.0"},
		helmtest.Chart{Dir: chartDir("web"), Version: "2.0.0"})
	in, sources := objs(t,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n",
		repository(repo.URL, ""),
		"apiVersion: v1\nkind: Secret\nmetadata: {name: web-values, namespace: apps}\nstringData:\n  values.yaml: |\n    password: pa55-from-secret-77\n",
		release(webChart+"  targetNamespace: shop\n  valuesFrom:\n  - {kind: Secret, name: web-values}\n  values:\n    greeting: hi\n    replicas: 2\n"),
	)
	out, err := helm.Expand(t.Context(), in, sources, helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Namespace/apps", "Secret/apps/web-values",
		"Secret/shop/shop-web-db", "ConfigMap/shop/shop-web-settings", "Service/shop/shop-web", "Deployment/shop/shop-web"}
	if diff := cmp.Diff(want, ids(out.Objects)); diff != "" {
		t.Errorf("objects mismatch (-want +got):\n%s", diff)
	}
	if c := out.Charts; len(c) != 1 || c[0].Version != "1.1.0" || c[0].ReleaseName != "shop-web" || len(c[0].Digest) != 64 {
		t.Errorf("charts %+v", c)
	}
	cm := byKind(out.Objects, "ConfigMap")
	if g, _, _ := unstructured.NestedString(cm.Object, "data", "greeting"); g != "hi" {
		t.Errorf("greeting %q: spec.values must win over the chart's", g)
	}
	dep := byKind(out.Objects, "Deployment")
	if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 2 {
		t.Errorf("replicas %d", r)
	}
	if out.Sources[object.IDOf(dep)] != "apps/web/release.yaml" {
		t.Errorf("the Deployment's source %q: want the HelmRelease's file", out.Sources[object.IDOf(dep)])
	}
	if !slices.Contains(out.Secrets, "pa55-from-secret-77") {
		t.Errorf("secrets %q: the value from the Secret is not known as secret", out.Secrets)
	}
	for kind, field := range map[string]string{"Deployment": "spec.template.spec.containers.0.env.0.value", "ConfigMap": "data.dsn", "Secret": "data.password"} {
		var u *unstructured.Unstructured
		for _, o := range out.Objects {
			if o.GetKind() == kind && strings.HasPrefix(o.GetName(), "shop-web") {
				u = o
			}
		}
		f := out.SecretFields[object.IDOf(u)]
		if f == nil || !slices.ContainsFunc(f.Fields, func(p object.FieldPath) bool { return strings.Join(p, ".") == field }) {
			t.Errorf("%s: secret fields %+v, want %s", kind, f, field)
		}
	}
	if !slices.ContainsFunc(out.Notes, func(n string) bool {
		return strings.Contains(n, "HelmRepository/apps/charts") && strings.Contains(n, "read, not applied")
	}) ||
		!slices.ContainsFunc(out.Notes, func(n string) bool { return strings.Contains(n, "spec.interval is read but not acted on") }) {
		t.Errorf("notes %q", out.Notes)
	}
}

// A chart is fetched once per digest: the next run reads the cache,
// though it reads the index again (a range may resolve to a newer
// version). Within a run, each repository's index is read once, however
// many HelmReleases use it.
func TestExpandCachesChartsByDigest(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0"})
	in, sources := objs(t, repository(repo.URL, ""), release(webChart))
	second := strings.Replace(release(webChart), "name: web,", "name: web2,", 1)
	more, moreSources := objs(t, second)
	in = append(in, more...)
	for id, s := range moreSources {
		sources[id] = s
	}
	cache := t.TempDir()
	for range 2 { // two runs, each with its fetcher
		out, err := helm.Expand(t.Context(), in, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: cache}})
		if err != nil || len(out.Charts) != 2 {
			t.Fatalf("%v, %d chart(s)", err, len(out.Charts))
		}
	}
	if got := [2]int{repo.Requests("index.yaml"), repo.Requests("web-1.0.0.tgz")}; got != [2]int{2, 1} {
		t.Errorf("requests (index, chart) %v, want [2 1]", got)
	}
}

// What the CRD policy does with a chart's crds/ directory; its CRDs are
// never pruned.
func TestExpandCRDPolicies(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("widgets")})
	chart := "  chart:\n    spec:\n      chart: widgets\n      sourceRef: {kind: HelmRepository, name: charts}\n"
	for _, tc := range []struct {
		policy     string
		want       []string
		ifNotThere bool
	}{
		{"", []string{"CustomResourceDefinition/widgets.charts.example.com", "Widget/apps/web-default"}, true},
		{"  install: {crds: Create}\n", []string{"CustomResourceDefinition/widgets.charts.example.com", "Widget/apps/web-default"}, true},
		{"  install: {crds: CreateReplace}\n", []string{"CustomResourceDefinition/widgets.charts.example.com", "Widget/apps/web-default"}, false},
		{"  install: {crds: Skip}\n", []string{"Widget/apps/web-default"}, false},
	} {
		t.Run(strings.TrimSpace(tc.policy), func(t *testing.T) {
			in, sources := objs(t, repository(repo.URL, ""), release(chart+tc.policy))
			out, err := helm.Expand(t.Context(), in, sources, helm.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(out.Objects)
			for i := range got { // the CRD's ID has its group
				got[i] = strings.Replace(got[i], "apiextensions.k8s.io/", "", 1)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("objects mismatch (-want +got):\n%s", diff)
			}
			if crd := byKind(out.Objects, "CustomResourceDefinition"); crd != nil {
				if got := crd.GetAnnotations()[object.AnnotationPrefix+object.SSAKey] == object.SSAIfNotPresent; got != tc.ifNotThere {
					t.Errorf("CRD created only when missing: %v, want %v", got, tc.ifNotThere)
				}
				if got := crd.GetAnnotations()[object.AnnotationPrefix+object.PruneKey]; got != object.Disabled {
					t.Errorf("the chart's CRD is annotated prune %q, want %s: Helm never deletes it", got, object.Disabled)
				}
			}
		})
	}
}

// Post-renderers and commonMetadata apply to every rendered object.
func TestExpandPostRenders(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0"})
	in, sources := objs(t, repository(repo.URL, ""), release(webChart+`  commonMetadata:
    labels: {team: shop}
  postRenderers:
  - kustomize:
      images:
      - {name: registry.example/web, newTag: "9.9"}
      patches:
      - target: {kind: Service}
        patch: |
          - op: add
            path: /metadata/annotations
            value: {patched: "yes"}
`))
	out, err := helm.Expand(t.Context(), in, sources, helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range out.Objects {
		if u.GetLabels()["team"] != "shop" {
			t.Errorf("%s has no commonMetadata label: %v", object.IDOf(u), u.GetLabels())
		}
	}
	dep := byKind(out.Objects, "Deployment")
	if c, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers"); c[0].(map[string]any)["image"] != "registry.example/web:9.9" {
		t.Errorf("image %v", c[0].(map[string]any)["image"])
	}
	if svc := byKind(out.Objects, "Service"); svc.GetAnnotations()["patched"] != "yes" {
		t.Errorf("service annotations %v", svc.GetAnnotations())
	}
}

// A repository behind basic auth gets the credentials of its secretRef.
func TestExpandAuthenticatesWithTheSecretRef(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0"})
	repo.Username, repo.Password = "ci", "repo-pa55-81"
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: repo-auth, namespace: apps}\ndata:\n  username: " + base64.StdEncoding.EncodeToString([]byte("ci")) +
		"\n  password: " + base64.StdEncoding.EncodeToString([]byte("repo-pa55-81")) + "\n"
	in, sources := objs(t, repository(repo.URL, "  secretRef: {name: repo-auth}\n"), release(webChart))
	_, err := helm.Expand(t.Context(), in, sources, helm.Options{})
	if err == nil || !strings.Contains(err.Error(), "Secret apps/repo-auth is not in the unit") {
		t.Errorf("without the Secret: %v", err)
	}
	withSecret, sources2 := objs(t, secret, repository(repo.URL, "  secretRef: {name: repo-auth}\n"), release(webChart))
	if _, err := helm.Expand(t.Context(), withSecret, sources2, helm.Options{}); err != nil {
		t.Fatalf("with the Secret: %v", err)
	}
	// From the cluster (or the configuration), through Lookup.
	lookup := func(_ context.Context, kind, ns, name string) (map[string]string, bool, error) {
		if kind == "Secret" && ns == "apps" && name == "repo-auth" {
			return map[string]string{"username": "ci", "password": "repo-pa55-81"}, true, nil
		}
		return nil, false, nil
	}
	if _, err := helm.Expand(t.Context(), in, sources, helm.Options{Lookup: lookup}); err != nil {
		t.Fatalf("with the Secret from Lookup: %v", err)
	}
}

// Every way a release can fail names the HelmRelease, its file and the
// cause, and quotes no secret.
func TestExpandErrorsNameTheCause(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0"}, helmtest.Chart{Dir: chartDir("hooked")}, helmtest.Chart{Dir: chartDir("broken")})
	down := helmtest.NewRepository(t)
	down.SetDown(true)
	corrupt := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0"})
	corrupt.Corrupt("web", "1.0.0")
	for _, tc := range []struct {
		name string
		docs []string
		want []string
	}{
		{"unknown version", []string{repository(repo.URL, ""), release(strings.Replace(webChart, "1.x", "3.x", 1))},
			[]string{"HelmRelease apps/web (apps/web/release.yaml)", "no version of chart web matching \"3.x\" (it has 1.0.0)"}},
		{"unknown chart", []string{repository(repo.URL, ""), release(strings.Replace(webChart, "chart: web", "chart: shop", 1))},
			[]string{"the repository has no chart shop"}},
		{"unreachable repository", []string{repository(down.URL, ""), release(webChart)},
			[]string{"HelmRepository apps/charts (" + down.URL + ")", "503 Service Unavailable"}},
		{"tampered archive", []string{repository(corrupt.URL, ""), release(webChart)},
			[]string{"chart web 1.0.0", "its digest is", "the index says"}},
		{"no repository", []string{release(webChart)},
			[]string{"HelmRepository apps/charts is neither in the unit nor anywhere in the configuration"}},
		{"a template error", []string{repository(repo.URL, ""), release(strings.Replace(strings.Replace(webChart, "1.x", "0.x", 1), "chart: web", "chart: broken", 1))},
			[]string{"chart broken 0.1.0 does not render", "broken/templates/configmap.yaml:6", "nil pointer evaluating interface {}.greeting"}},
		{"values the schema refuses", []string{repository(repo.URL, ""), release(webChart + "  values: {port: eighty}\n")},
			[]string{"chart web 1.0.0 does not render", "port"}},
		{"a missing valuesFrom", []string{repository(repo.URL, ""), release(webChart + "  valuesFrom:\n  - {kind: Secret, name: web-values}\n")},
			[]string{"spec.valuesFrom[0] Secret apps/web-values: not found"}},
		{"a valuesFrom key that is not YAML", []string{repository(repo.URL, ""),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: web-values, namespace: apps}\nstringData:\n  values.yaml: \"secret-text-66: [\"\n",
			release(webChart + "  valuesFrom:\n  - {kind: Secret, name: web-values}\n")},
			[]string{"key values.yaml is not YAML values"}},
		{"an unknown field", []string{repository(repo.URL, ""), release(webChart + "  valuesFile: x.yaml\n")},
			[]string{"spec: valuesFile is not a HelmRelease field this tool knows"}},
		{"a chartRef to a HelmChart not there", []string{release("  chartRef: {kind: HelmChart, name: web}\n")},
			[]string{"spec.chartRef HelmChart/apps/web: HelmChart apps/web is neither in the unit nor anywhere in the configuration"}},
		{"a chartRef to an ExternalArtifact", []string{release("  chartRef: {kind: ExternalArtifact, name: web}\n")},
			[]string{"spec.chartRef ExternalArtifact/apps/web: charts from a ExternalArtifact are not supported yet (OCIRepository and HelmChart are)"}},
		{"a chartRef to an OCIRepository that is not there", []string{release("  chartRef: {kind: OCIRepository, name: web}\n")},
			[]string{"spec.chartRef: OCIRepository apps/web is neither in the unit nor anywhere in the configuration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, sources := objs(t, tc.docs...)
			_, err := helm.Expand(t.Context(), in, sources, helm.Options{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret-text-66") {
				t.Errorf("the error quotes a Secret's value: %v", err)
			}
		})
	}
}

// A chart's hooks are kept apart from its objects, in Helm's order, each
// with its events and policies; hooks on events this tool does not run
// are noted; disableHooks drops them. The config digest moves with the
// chart and values, not with .Release.IsUpgrade, which follows the
// releases the unit installed.
func TestExpandKeepsHooksApart(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("hooked")})
	hooked := "  chart:\n    spec:\n      chart: hooked\n      sourceRef: {kind: HelmRepository, name: charts}\n"
	expand := func(spec string, recorded map[string]helm.Recorded) *helm.Expanded {
		t.Helper()
		in, sources := objs(t, repository(repo.URL, ""), release(hooked+spec))
		out, err := helm.Expand(t.Context(), in, sources, helm.Options{Recorded: recorded})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := expand("", nil)
	if got := ids(out.Objects); !slices.Equal(got, []string{"ConfigMap/apps/web-settings"}) {
		t.Errorf("objects: %v", got)
	}
	type hook struct {
		ID       string
		Events   []string
		Weight   int
		Policies []string
	}
	var got []hook
	for _, h := range out.Charts[0].Hooks {
		got = append(got, hook{object.IDOf(h.Object).String(), h.Events, h.Weight, h.DeletePolicies})
	}
	want := []hook{
		{"Job/apps/web-migrate", []string{"pre-install", "pre-upgrade"}, -5, nil},
		{"Job/apps/web-cleanup", []string{"pre-delete"}, 0, []string{"hook-succeeded"}},
		{"ConfigMap/apps/web-installed", []string{"post-install"}, 0, []string{"before-hook-creation"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	if !slices.ContainsFunc(out.Notes, func(n string) bool {
		return strings.Contains(n, "Job/web-cleanup (pre-delete) are not run")
	}) {
		t.Errorf("no note of the pre-delete hook: %q", out.Notes)
	}
	if c := out.Charts[0]; c.Source != "apps/web/release.yaml" || c.Key() != "apps/web" {
		t.Errorf("chart source %q, key %q", c.Source, c.Key())
	}

	digest := out.Charts[0].ConfigDigest
	if again := expand("", nil).Charts[0].ConfigDigest; again != digest {
		t.Errorf("the same release rendered twice has two digests: %s, %s", digest, again)
	}
	if moved := expand("  values: {schema: \"2\"}\n", nil).Charts[0].ConfigDigest; moved == digest {
		t.Error("new values left the config digest as it was")
	}
	// .Release.IsUpgrade: an install renders false; a changed release
	// true; an unchanged one as it rendered last.
	isUpgrade := func(e *helm.Expanded) any { return e.Objects[0].Object["data"].(map[string]any)["upgrade"] }
	for _, tc := range []struct {
		name     string
		recorded map[string]helm.Recorded
		want     string
	}{
		{"not recorded: an install", nil, "false"},
		{"changed: an upgrade", map[string]helm.Recorded{"apps/web": {Digest: "sha256:old"}}, "true"},
		{"unchanged since its install", map[string]helm.Recorded{"apps/web": {Digest: digest}}, "false"},
		{"unchanged since an upgrade", map[string]helm.Recorded{"apps/web": {Digest: digest, Upgraded: true}}, "true"},
	} {
		e := expand("", tc.recorded)
		if got := isUpgrade(e); got != tc.want || e.Charts[0].Upgrade != (tc.want == "true") {
			t.Errorf("%s: .Release.IsUpgrade %v, Upgrade %v; want %s", tc.name, got, e.Charts[0].Upgrade, tc.want)
		}
		if e.Charts[0].ConfigDigest != digest {
			t.Errorf("%s: the config digest moved with how the release rendered", tc.name)
		}
	}

	off := expand("  install: {disableHooks: true}\n", nil)
	if len(off.Charts[0].Hooks) != 0 || len(off.Objects) != 1 {
		t.Errorf("disableHooks: objects %v, %d hook(s)", ids(off.Objects), len(off.Charts[0].Hooks))
	}
}

// Charts from an OCI registry: a HelmRepository of type oci resolves a
// version range among the registry's tags; an OCIRepository chartRef
// pins a tag, a semver range or a digest, the digest winning.
func TestExpandRendersOCICharts(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0", AppVersion: "1.0"})
	first := reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "1.1.0", AppVersion: "1.1"})
	reg.Push("charts", helmtest.Chart{Dir: chartDir("web"), Version: "2.0.0", AppVersion: "2.0"})
	ociRepo := "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: apps}\nspec:\n  type: oci\n  insecure: true\n  url: oci://" + reg.Host + "/charts\n"
	ociSource := func(ref string) string {
		return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: web, namespace: apps}\nspec:\n  insecure: true\n  url: oci://" + reg.Host + "/charts/web\n  ref: " + ref + "\n"
	}
	chartRef := release("  chartRef: {kind: OCIRepository, name: web}\n")
	image := func(out *helm.Expanded) string {
		c, _, _ := unstructured.NestedSlice(byKind(out.Objects, "Deployment").Object, "spec", "template", "spec", "containers")
		return c[0].(map[string]any)["image"].(string)
	}
	for _, tc := range []struct {
		name string
		docs []string
		want string
	}{
		{"HelmRepository of type oci, a range", []string{ociRepo, release(webChart)}, "registry.example/web:1.1"},
		{"OCIRepository, a tag", []string{ociSource("{tag: 1.0.0}"), chartRef}, "registry.example/web:1.0"},
		{"OCIRepository, a semver range", []string{ociSource("{semver: \">=1.0.0 <2.0.0\"}"), chartRef}, "registry.example/web:1.1"},
		{"OCIRepository, a digest wins over a tag", []string{ociSource("{tag: 2.0.0, digest: \"" + first + "\"}"), chartRef}, "registry.example/web:1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, sources := objs(t, tc.docs...)
			out, err := helm.Expand(t.Context(), in, sources, helm.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := image(out); got != tc.want {
				t.Errorf("image %q, want %q", got, tc.want)
			}
			if c := out.Charts[0]; c.Chart != "web" || !strings.HasPrefix(c.From, "oci://"+reg.Host+"/charts/web") || len(c.Digest) != 64 {
				t.Errorf("chart %+v", c)
			}
		})
	}
	in, sources := objs(t, ociRepo, release(strings.Replace(webChart, "1.x", "3.x", 1)))
	if _, err := helm.Expand(t.Context(), in, sources, helm.Options{}); err == nil || !strings.Contains(err.Error(), `/charts/web: no tag matches semver range "3.x" (3 tags: 2.0.0, 1.1.0, 1.0.0)`) {
		t.Errorf("an unknown version: %v", err)
	}
}

// A chart source the unit does not hold is taken from the configuration
// (Options.Sources: another unit's build, the sync's files), read by the
// same reader; without it, the release fails naming the source.
func TestExpandChartSourceFromTheConfiguration(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0"})
	set, err := config.ReadObjects([]config.Object{{File: "flux/repositories/helm.yaml", Line: 1, YAML: []byte(repository(repo.URL, ""))}})
	if err != nil {
		t.Fatal(err)
	}
	sources := func(kind, namespace, name string) *config.Source {
		return set.Source(kind, config.Ref{Namespace: namespace, Name: name})
	}
	in, files := objs(t, release(webChart))
	out, err := helm.Expand(t.Context(), in, files, helm.Options{Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Charts) != 1 || out.Charts[0].Version != "1.0.0" {
		t.Errorf("charts %+v", out.Charts)
	}
	if _, err := helm.Expand(t.Context(), in, files, helm.Options{}); err == nil || !strings.Contains(err.Error(), "HelmRepository apps/charts is neither in the unit nor anywhere in the configuration") {
		t.Errorf("without the configuration's sources: %v", err)
	}
}

// A chartRef to a HelmChart renders the chart it names, from its
// HelmRepository (values files and version its own), whether the
// HelmChart is in the unit or elsewhere in the configuration; a HelmChart
// of a Bucket, or one with spec.verify, is refused by name.
func TestExpandChartRefHelmChart(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("web"), Version: "1.0.0", AppVersion: "1.0"}, helmtest.Chart{Dir: chartDir("web"), Version: "2.0.0", AppVersion: "2.0"})
	helmChart := func(extra string) string {
		return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata: {name: web, namespace: apps}\nspec:\n  chart: web\n  version: \"1.x\"\n  sourceRef: {kind: HelmRepository, name: charts}\n" + extra
	}
	chartRef := release("  chartRef: {kind: HelmChart, name: web}\n")
	elsewhere, err := config.ReadObjects([]config.Object{{File: "flux/charts.yaml", Line: 1, YAML: []byte(helmChart(""))}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		docs    []string
		sources func(kind, namespace, name string) *config.Source
		err     string
	}{
		{name: "in the unit", docs: []string{repository(repo.URL, ""), helmChart(""), chartRef}},
		{name: "elsewhere in the configuration", docs: []string{repository(repo.URL, ""), chartRef}, sources: func(kind, namespace, name string) *config.Source {
			return elsewhere.Source(kind, config.Ref{Namespace: namespace, Name: name})
		}},
		{name: "of a Bucket", docs: []string{repository(repo.URL, ""), strings.Replace(helmChart(""), "HelmRepository", "Bucket", 1), chartRef},
			err: `spec.chartRef HelmChart/apps/web: HelmChart apps/web: spec.sourceRef.kind "Bucket": charts from a Bucket are not supported yet`},
		{name: "verified", docs: []string{repository(repo.URL, ""), helmChart("  verify: {provider: cosign}\n"), chartRef},
			err: "HelmChart apps/web sets spec.verify, which kustomize-deploy does not honour"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, files := objs(t, tc.docs...)
			out, err := helm.Expand(t.Context(), in, files, helm.Options{Sources: tc.sources})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Charts) != 1 || out.Charts[0].Version != "1.0.0" {
				t.Errorf("charts %+v, want web 1.0.0 (the HelmChart's range)", out.Charts)
			}
		})
	}
}

// A HelmRelease's refusal names its file and line first, and is a
// build.FileError there, so that front ends annotate the line.
func TestExpandErrorsCarryTheLine(t *testing.T) {
	in, sources := objs(t, release(webChart+"  kubeConfig: {configMapRef: {name: spoke}}\n"))
	lineOf := func(file string, id object.ID) int {
		if file == "apps/web/release.yaml" && id.Kind == "HelmRelease" && id.Name == "web" {
			return 12
		}
		return 0
	}
	_, err := helm.Expand(t.Context(), in, sources, helm.Options{LineOf: lineOf})
	if err == nil || !strings.HasPrefix(err.Error(), "HelmRelease apps/web (apps/web/release.yaml:12): spec.kubeConfig.configMapRef:") {
		t.Fatalf("error %v, want the release and its file:line first", err)
	}
	fes := build.FileErrors(err)
	if len(fes) != 1 || fes[0].File != "apps/web/release.yaml" || fes[0].Line != 12 {
		t.Errorf("file errors %+v, want the HelmRelease's line", fes)
	}
}

// A chartRef to an ExternalArtifact renders the chart its
// ArtifactGenerator made (Options.Artifact): at the artifact's root, or
// in its one directory, as a chart archive extracted holds it.
func TestExpandChartRefExternalArtifact(t *testing.T) {
	web := checkoutOf(t, map[string]string{"web": "web"}, nil)
	atRoot := filepath.Join(web, "web")
	for name, dir := range map[string]string{"one directory": web, "the root": atRoot} {
		artifact := func(_ context.Context, ref helm.Reference) (helm.GitTree, error) {
			if ref != (helm.Reference{Kind: "ExternalArtifact", Name: "web", Namespace: "apps"}) {
				return helm.GitTree{}, errors.New("asked for " + ref.String())
			}
			return helm.GitTree{Dir: dir, Revision: "latest@sha256:0123"}, nil
		}
		in, files := objs(t, release("  chartRef: {kind: ExternalArtifact, name: web}\n"))
		out, err := helm.Expand(t.Context(), in, files, helm.Options{Artifact: artifact})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c := out.Charts[0]; c.Chart != "web" || !strings.Contains(c.From, "of ExternalArtifact/apps/web at latest@sha256:0123") {
			t.Errorf("%s: chart %+v", name, c)
		}
	}
}

// A source is noted by what it feeds: an OCIRepository no HelmRelease of
// the unit takes its chart from is an artifact of manifests (a
// Kustomization's), not a chart's source; one a release's chartRef names,
// and a HelmRepository, are charts' sources.
func TestSourceNotesSayWhatTheSourceFeeds(t *testing.T) {
	t.Parallel()
	oci := func(name string) string {
		return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: " + name + ", namespace: apps}\nspec:\n  interval: 1h\n  url: oci://127.0.0.1:1/" + name + "\n"
	}
	in, sources := objs(t, oci("manifests"), oci("chart"),
		release("  chartRef: {kind: OCIRepository, name: chart}\n"))
	out, _ := helm.Expand(t.Context(), in, sources, helm.Options{})
	notes := strings.Join(out.Notes, "\n")
	for _, want := range []string{
		"OCIRepository/apps/manifests (apps/web/release.yaml) is read, not applied: no HelmRelease of the unit takes its chart from it, it is a source of manifests",
		"OCIRepository/apps/chart (apps/web/release.yaml) is read, not applied: charts are rendered here",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// A unit's releases of different charts are fetched and rendered several
// at a time, and come out in the unit's order: each release's valuesFrom
// is read through a lookup that lets none go on until two releases are in
// it at once (or a deadlock guard passes, and the test fails).
func TestExpandRendersReleasesInParallel(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one CPU: releases render one at a time")
	}
	charts := []string{"web", "ingress", "widgets"}
	var served []helmtest.Chart
	for _, c := range charts {
		served = append(served, helmtest.Chart{Dir: chartDir(c), Version: "1.0.0"})
	}
	repo := helmtest.NewRepository(t, served...)
	docs := []string{repository(repo.URL, "")}
	for _, c := range charts {
		spec := "  chart:\n    spec:\n      chart: " + c + "\n      sourceRef: {kind: HelmRepository, name: charts}\n" +
			"  releaseName: rel-" + c + "\n  valuesFrom:\n  - {kind: ConfigMap, name: values-" + c + ", optional: true}\n"
		docs = append(docs, strings.Replace(release(spec), "name: web,", "name: "+c+",", 1))
	}
	in, sources := objs(t, docs...)
	var mu sync.Mutex
	inside, most := 0, 0
	both := make(chan struct{})
	lookup := func(ctx context.Context, kind, namespace, name string) (map[string]string, bool, error) {
		mu.Lock()
		inside++
		most = max(most, inside)
		if inside == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-time.After(30 * time.Second): // a guard against a deadlock, not a measure
		}
		mu.Lock()
		inside--
		mu.Unlock()
		return nil, false, nil
	}
	out, err := helm.Expand(t.Context(), in, sources, helm.Options{Lookup: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if most < 2 {
		t.Errorf("at most %d release(s) rendered at once, want 2", most)
	}
	var order []string
	for _, c := range out.Charts {
		order = append(order, c.ReleaseName+"="+c.Chart)
	}
	if diff := cmp.Diff([]string{"rel-web=web", "rel-ingress=ingress", "rel-widgets=widgets"}, order); diff != "" {
		t.Errorf("releases out of the unit's order (-want +got):\n%s", diff)
	}
	var from []string
	for _, u := range out.Objects {
		for _, c := range out.Charts {
			if slices.Contains(c.Objects, object.IDOf(u)) && !slices.Contains(from, c.Chart) {
				from = append(from, c.Chart)
			}
		}
	}
	if diff := cmp.Diff([]string{"web", "ingress", "widgets"}, from); diff != "" {
		t.Errorf("objects not in the releases' order (-want +got):\n%s", diff)
	}
}
