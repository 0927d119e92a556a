package helm_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// checkoutOf is a repository root holding files (path: content) and, at
// each dirs key, a copy of a test chart.
func checkoutOf(t *testing.T, dirs map[string]string, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for dst, chart := range dirs {
		copyDir(t, chartDir(chart), filepath.Join(root, filepath.FromSlash(dst)))
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
	return root
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func gitRepository(url string) string {
	return "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: shop, namespace: apps}\nspec:\n  interval: 1h\n  url: " + url + "\n  ref: {branch: main}\n"
}

func gitChart(path, source string) string {
	return "  chart:\n    spec:\n      chart: " + path + "\n      sourceRef: {kind: GitRepository, name: " + source + "}\n"
}

// umbrella is an umbrella chart depending on web (vendored in charts/)
// and ingress (from repoURL), locked at lockedIngress.
func umbrella(repoURL, lockedIngress string) map[string]string {
	return map[string]string{
		"charts/shop/Chart.yaml": "apiVersion: v2\nname: shop\nversion: 0.1.0\ndependencies:\n" +
			"- {name: web, version: 1.0.0, repository: https://charts.example/web}\n" +
			"- {name: ingress, version: \"4.x\", repository: " + repoURL + "}\n",
		"charts/shop/Chart.lock": "dependencies:\n- {name: web, version: 1.0.0, repository: https://charts.example/web}\n" +
			"- {name: ingress, version: " + lockedIngress + ", repository: " + repoURL + "}\n" +
			"digest: sha256:0000\ngenerated: \"2025-01-01T00:00:00Z\"\n",
		"charts/shop/values.yaml":              "web:\n  greeting: from-the-umbrella\n",
		"charts/shop/templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shop}\ndata: {release: \"{{ .Release.Name }}\"}\n",
	}
}

func kindsAndNames(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, u := range objs {
		out = append(out, u.GetKind()+"/"+u.GetName())
	}
	slices.Sort(out)
	return out
}

// A HelmRelease whose GitRepository is this repository (its URL is the
// checkout's origin, whatever the form) renders the chart directory the
// chart path names from the root, with values files from the repository;
// the GitRepository is read, not applied.
func TestExpandRendersAChartOfThisRepository(t *testing.T) {
	root := checkoutOf(t, map[string]string{"charts/web": "web"}, map[string]string{"apps/web/values-prod.yaml": "greeting: from-git\n"})
	in, sources := objs(t, gitRepository("ssh://git@github.com/acme/shop.git"),
		release(gitChart("./charts/web", "shop")+"      version: \"9.x\"\n      valuesFiles: [charts/web/values.yaml, ./apps/web/values-prod.yaml]\n"))
	out, err := helm.Expand(t.Context(), in, sources, helm.Options{Checkout: &helm.Checkout{Root: root, Remote: "https://github.com/acme/shop"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ConfigMap/web-settings", "Deployment/web", "Service/web"}, kindsAndNames(out.Objects)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if got, _, _ := unstructured.NestedString(byKind(out.Objects, "ConfigMap").Object, "data", "greeting"); got != "from-git" {
		t.Errorf("greeting %q: the values file of the repository is not used", got)
	}
	c := out.Charts[0]
	if c.Chart != "web" || c.Version != "1.0.0" || c.From != "./charts/web" || len(c.Digest) != 64 {
		t.Errorf("chart %+v", c)
	}
	if !slices.ContainsFunc(out.Notes, func(n string) bool { return strings.Contains(n, `spec.chart.spec.version "9.x" is ignored`) }) {
		t.Errorf("notes %q lack the ignored version", out.Notes)
	}
	if !slices.ContainsFunc(out.Notes, func(n string) bool { return strings.HasPrefix(n, "GitRepository/apps/shop (") }) {
		t.Errorf("notes %q do not say the GitRepository is read, not applied", out.Notes)
	}

	// The unit's own Kustomization's source is this repository, whatever
	// its URL, and need not be in the unit.
	in, sources = objs(t, release(gitChart("charts/web", "flux-system")+"      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}\n"))
	opts := (&helm.Options{}).InCheckout(root).FromSource(helm.Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "flux-system"})
	if _, err := helm.Expand(t.Context(), in, sources, *opts); err != nil {
		t.Errorf("the Kustomization's source: %v", err)
	}
}

// A chart directory of the repository gets its dependencies as `helm
// dependency build` would: a vendored one (in charts/) as it is, a
// missing one fetched from its repository at Chart.lock's version; a
// second run takes it from the cache; the digest covers both.
func TestExpandCompletesAChartsDependencies(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("ingress"), Version: "4.0.0"}, helmtest.Chart{Dir: chartDir("ingress"), Version: "4.1.0"})
	root := checkoutOf(t, map[string]string{"charts/shop/charts/web": "web"}, umbrella(repo.URL, "4.0.0"))
	in, sources := objs(t, release(gitChart("./charts/shop", "flux-system")))
	opts := (&helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir()}}).InCheckout(root).
		FromSource(helm.Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "apps"})
	out, err := helm.Expand(t.Context(), in, sources, *opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ConfigMap/shop", "ConfigMap/web-settings", "Deployment/web", "Deployment/web-controller", "IngressClass/nginx-apps", "Service/web", "Service/web-controller"}
	if diff := cmp.Diff(want, kindsAndNames(out.Objects)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	for _, u := range out.Objects {
		if u.GetKind() == "ConfigMap" && u.GetName() == "web-settings" {
			if got, _, _ := unstructured.NestedString(u.Object, "data", "greeting"); got != "from-the-umbrella" {
				t.Errorf("the vendored chart's greeting %q: the umbrella's values do not reach it", got)
			}
		}
		if u.GetKind() == "Deployment" && u.GetName() == "web-controller" {
			c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			if img := c[0].(map[string]any)["image"]; img != "registry.example/ingress-controller:1.10" {
				t.Errorf("ingress image %v", img)
			}
		}
	}
	if n := repo.Requests("ingress-4.0.0.tgz"); n != 1 {
		t.Errorf("the locked version was downloaded %d time(s), want 1", n)
	}
	if n := repo.Requests("ingress-4.1.0.tgz"); n != 0 {
		t.Errorf("a version newer than the lock was downloaded")
	}
	again, err := helm.Expand(t.Context(), in, sources, *(&helm.Options{Fetcher: &helm.Fetcher{CacheDir: opts.Fetcher.CacheDir}, Checkout: opts.Checkout}))
	if err != nil {
		t.Fatal(err)
	}
	if n := repo.Requests("ingress-4.0.0.tgz"); n != 1 {
		t.Errorf("a cached dependency was downloaded again (%d requests)", n)
	}
	if again.Charts[0].Digest != out.Charts[0].Digest {
		t.Errorf("the same chart has two digests")
	}
}

// Charts kept in the repository fail by name: another repository's
// GitRepository, a dependency that cannot be fetched (naming Chart.lock,
// the dependency and its URL), a lock out of sync, a path that is no chart
// or leaves the repository.
func TestExpandRepositoryChartErrors(t *testing.T) {
	down := helmtest.NewRepository(t)
	down.SetDown(true)
	up := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("ingress"), Version: "4.0.0"})
	self := helm.Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "apps"}
	for _, tc := range []struct {
		name  string
		files map[string]string
		docs  []string
		want  []string
	}{
		{"another repository", nil, []string{gitRepository("https://github.com/other/charts"), release(gitChart("./charts/web", "shop"))},
			[]string{"HelmRelease apps/web (apps/web/release.yaml)", "spec.chart.spec.sourceRef GitRepository/apps/shop", "its spec.url https://github.com/other/charts is not this checkout's origin (https://github.com/acme/shop)"}},
		{"a GitRepository not known", nil, []string{release(gitChart("./charts/web", "elsewhere"))},
			[]string{"GitRepository/apps/elsewhere: it is not in the unit, nor the source of the unit's Kustomization"}},
		{"an unreachable dependency", umbrella(down.URL, "4.0.0"), []string{release(gitChart("./charts/shop", "flux-system"))},
			[]string{"charts/shop/Chart.lock: dependency ingress 4.0.0 from " + down.URL, "503 Service Unavailable"}},
		{"a lock out of sync", umbrella(up.URL, "3.0.0"), []string{release(gitChart("./charts/shop", "flux-system"))},
			[]string{"charts/shop/Chart.lock: dependency ingress: locked at 3.0.0, out of Chart.yaml's range \"4.x\""}},
		{"no chart there", nil, []string{release(gitChart("./apps", "flux-system"))},
			[]string{"apps holds no Chart.yaml"}},
		{"out of the repository", nil, []string{release(gitChart("../../etc", "flux-system"))},
			[]string{"chart directory etc is not in the repository"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"apps/README": "x"}
			for k, v := range tc.files {
				files[k] = v
			}
			root := checkoutOf(t, map[string]string{"charts/web": "web", "charts/shop/charts/web": "web"}, files)
			in, sources := objs(t, tc.docs...)
			opts := (&helm.Options{Checkout: &helm.Checkout{Remote: "https://github.com/acme/shop"}}).InCheckout(root).FromSource(self)
			_, err := helm.Expand(t.Context(), in, sources, *opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// A unit whose path is a chart builds to one HelmRelease named as the
// unit, in its namespace, with the chart's values and the unit's values
// file on top, and the Kustomization's transformations as post-renderers;
// Expand renders it as any HelmRelease.
func TestUnitRelease(t *testing.T) {
	root := checkoutOf(t, map[string]string{"charts/web": "web"}, map[string]string{"charts/web/values-shop.yaml": "greeting: for-the-shop-unit\n"})
	dir := filepath.Join(root, "charts", "web")
	if !helm.IsChart(dir) || helm.IsChart(root) {
		t.Fatal("IsChart is wrong")
	}
	src := helm.Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "flux-system"}
	built, err := helm.UnitRelease(helm.UnitChart{Name: "shop", Namespace: "store", Source: src,
		Build: build.Options{Root: root, Path: dir, Labels: map[string]string{"team": "a"}, Images: []build.Image{{Name: "registry.example/web", NewTag: "9.9"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(built.Objects) != 1 || built.Sources[object.IDOf(built.Objects[0])] != "charts/web/Chart.yaml" {
		t.Fatalf("build %v %v", kindsAndNames(built.Objects), built.Sources)
	}
	opts := (&helm.Options{}).InCheckout(root).FromSource(src)
	out, err := helm.Expand(t.Context(), built.Objects, built.Sources, *opts)
	if err != nil {
		t.Fatal(err)
	}
	c := out.Charts[0]
	if c.ReleaseName != "shop" || c.Namespace != "store" || c.Source != "charts/web/Chart.yaml" {
		t.Errorf("release %+v", c)
	}
	cm := byKind(out.Objects, "ConfigMap")
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "greeting"); got != "for-the-shop-unit" || cm.GetNamespace() != "store" || cm.GetLabels()["team"] != "a" {
		t.Errorf("configmap %v", cm.Object)
	}
	dep := byKind(out.Objects, "Deployment")
	cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if img := cs[0].(map[string]any)["image"]; img != "registry.example/web:9.9" {
		t.Errorf("image %v: the unit's images are not applied", img)
	}

	if _, err := helm.UnitRelease(helm.UnitChart{Name: "shop", Build: build.Options{Root: root, Path: dir, NamePrefix: "x-"}}); err == nil || !strings.Contains(err.Error(), "spec.namePrefix: not supported for a unit whose path is a chart") {
		t.Errorf("a name prefix: %v", err)
	}
}

// A missing dependency in an OCI registry is pulled at the locked
// version, not the newest in range.
func TestExpandFetchesAnOCIDependency(t *testing.T) {
	reg := helmtest.NewTLSRegistry(t)
	reg.Push("charts", helmtest.Chart{Dir: chartDir("ingress"), Version: "4.0.0", AppVersion: "4.0"})
	reg.Push("charts", helmtest.Chart{Dir: chartDir("ingress"), Version: "4.1.0", AppVersion: "4.1"})
	root := checkoutOf(t, map[string]string{"charts/shop/charts/web": "web"}, umbrella("oci://"+reg.Host+"/charts", "4.0.0"))
	in, sources := objs(t, release(gitChart("./charts/shop", "flux-system")))
	opts := (&helm.Options{Fetcher: &helm.Fetcher{Client: reg.Client}}).InCheckout(root).FromSource(helm.Reference{Kind: "GitRepository", Name: "flux-system", Namespace: "apps"})
	out, err := helm.Expand(t.Context(), in, sources, *opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := out.Charts[0]; c.Chart != "shop" {
		t.Errorf("chart %+v", c)
	}
	for _, u := range out.Objects {
		if u.GetKind() == "Deployment" && u.GetName() == "web-controller" {
			c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			if img := c[0].(map[string]any)["image"]; img != "registry.example/ingress-controller:4.0" {
				t.Errorf("ingress image %v: not the locked 4.0.0", img)
			}
			return
		}
	}
	t.Errorf("objects %v lack the OCI dependency's", kindsAndNames(out.Objects))
}
