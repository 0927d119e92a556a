package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// The Helm scenario (--helm) measures kustomize-deploy's in-process Helm
// path against the helm CLI built from the same Helm module (hack/tools/helm):
//
//  1. rendering a chart of helmBigCount each of Deployments, Services and
//     ConfigMaps: `kustomize-deploy build` of a unit holding a
//     HelmRepository and a HelmRelease against `helm template --repo`,
//     both with their chart caches warm, helmRenderRuns times each,
//     alternating, medians compared;
//  2. the first deploy of a layout like flux2-kustomize-helm-example (an
//     ingress-like chart and a cert-manager-like chart with a CRD and a
//     post-install hook in infra-controllers, an app chart in apps, which
//     depends on it): `apply --config` against `helm upgrade --install` of
//     the three charts one after another, both with cold chart caches;
//  3. a no-op re-run of a configuration of helmNoopUnits units, each one
//     HelmRelease of the app chart, with a warm chart cache: its wall time.
//
// The charts are generated (helmcharts.go) and served from a chart
// repository on 127.0.0.1 for the run.
const (
	helmRenderRuns = 5
	// helmColdRuns is how many renders of each tool start from empty
	// chart caches.
	helmColdRuns  = 3
	helmNoopUnits = 10
	helmNoopRuns  = 3
)

// Where each configuration's Kustomizations are, relative to its
// repository. A configuration is known by its directory (and its Git
// remote, which these repositories lack): sharing one, a run of one
// configuration would garbage-collect the other's units, and the many-unit
// scenario's.
const (
	helmLayoutConfig = "clusters/helm-layout"
	helmNoopConfig   = "clusters/helm-noop"
)

// Targets of the Helm scenario.
const (
	helmRenderLimit = 1.0
	helmLayoutLimit = 0.5
	helmNoopLimit   = time.Second
)

const toolHelm = "helm"

// helmResult is what the Helm scenario measured.
type helmResult struct {
	// RenderObjects is how many objects the big chart renders.
	RenderObjects int
	// RenderColdOurs and RenderColdHelm are renders with empty chart
	// caches (each tool's emptied before each), alternating; RenderOurs
	// and RenderHelm the warm ones that follow, alternating.
	RenderColdOurs, RenderColdHelm []measurement
	RenderOurs, RenderHelm         []measurement
	// LayoutHelm are helm's installs of the layout's charts, one after
	// another; LayoutHelmSum adds them up. LayoutOurs is apply --config of
	// the layout.
	LayoutHelm    []measurement
	LayoutHelmSum measurement
	LayoutOurs    measurement
	// NoopFirst is the first deploy of the configuration of helmNoopUnits
	// HelmReleases, Noop its no-op re-runs.
	NoopFirst measurement
	Noop      []measurement
}

// median is the measurement of median wall time of ms (the lower of the
// two middle ones for an even count); failed when any of them failed.
func median(ms []measurement) measurement {
	if len(ms) == 0 {
		return measurement{}
	}
	for _, m := range ms {
		if m.Err != nil {
			return m
		}
	}
	sorted := slices.Clone(ms)
	slices.SortFunc(sorted, func(a, b measurement) int { return int(a.Wall - b.Wall) })
	return sorted[(len(sorted)-1)/2]
}

// chartRepository is an HTTP chart repository on 127.0.0.1 serving the
// packaged charts of a directory and their index.yaml.
type chartRepository struct {
	URL string
	srv *http.Server
}

// serveCharts packages every chart directory of charts into dir, indexes
// them and serves dir on 127.0.0.1.
func serveCharts(charts, dir string) (*chartRepository, error) {
	entries, err := os.ReadDir(charts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, e := range entries {
		ch, err := loader.LoadDir(filepath.Join(charts, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", e.Name(), err)
		}
		if _, err := chartutil.Save(ch, dir); err != nil {
			return nil, fmt.Errorf("packaging chart %s: %w", e.Name(), err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	url := "http://" + ln.Addr().String()
	index, err := repo.IndexDirectory(dir, url)
	if err != nil {
		ln.Close()
		return nil, err
	}
	index.SortEntries()
	if err := index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		ln.Close()
		return nil, err
	}
	r := &chartRepository{URL: url, srv: &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *chartRepository) Close() error { return r.srv.Close() }

// helmRelease is a HelmRelease of chart from the HelmRepository "charts"
// of the same namespace, released as releaseName into targetNamespace
// (created) when that is set.
func helmRelease(name, ns, chart, releaseName, targetNamespace string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: %s
  namespace: %s
spec:
  interval: 10m
  timeout: 5m
  releaseName: %s
  chart:
    spec:
      chart: %s
      version: %q
      sourceRef:
        kind: HelmRepository
        name: charts
`, name, ns, releaseName, chart, chartVersion)
	if targetNamespace != "" {
		fmt.Fprintf(&b, "  targetNamespace: %s\n  install:\n    createNamespace: true\n", targetNamespace)
	}
	return b.String()
}

func helmRepository(ns, url string) string {
	return fmt.Sprintf("apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: %s\nspec:\n  interval: 1h\n  url: %s\n", ns, url)
}

// helmUnit is a unit of a Helm configuration: its HelmReleases (chart and
// target namespace) and the unit it depends on.
type helmUnit struct {
	Name      string
	Releases  [][2]string // chart, target namespace
	DependsOn string
}

// writeHelmRepo replaces root with a repository of units, each with the
// HelmRepository of url and its HelmReleases in units/<name>/, and their
// Kustomizations in configDir. It returns the configuration's directory.
func writeHelmRepo(root, configDir, url string, us []helmUnit, wait bool) (string, error) {
	if err := os.RemoveAll(root); err != nil {
		return "", err
	}
	config := filepath.Join(root, configDir)
	if err := os.MkdirAll(config, 0o755); err != nil {
		return "", err
	}
	for _, u := range us {
		dir := filepath.Join(root, "units", u.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		// The HelmReleases and their repository are read, not applied:
		// their namespace need not exist.
		const ns = "flux-system"
		files := map[string]string{"repository.yaml": helmRepository(ns, url)}
		for _, r := range u.Releases {
			files[r[0]+".yaml"] = helmRelease(r[0], ns, r[0], r[0], r[1])
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				return "", err
			}
		}
		k := fluxKustomization(dagUnit{Name: u.Name, DependsOn: u.DependsOn}, wait)
		if err := os.WriteFile(filepath.Join(config, u.Name+".yaml"), []byte(k), 0o644); err != nil {
			return "", err
		}
	}
	return config, nil
}

// layoutUnits is the example layout as kustomize-deploy runs it: the
// ingress and certs charts in infra-controllers, the app in apps, after
// it, each into Namespace <prefix>-<chart>.
func layoutUnits(prefix string) []helmUnit {
	ns := func(chart string) string { return prefix + "-" + chart }
	return []helmUnit{
		{Name: prefix + "-infra-controllers", Releases: [][2]string{{chartIngress, ns(chartIngress)}, {chartCerts, ns(chartCerts)}}},
		{Name: prefix + "-apps", Releases: [][2]string{{chartApp, ns(chartApp)}}, DependsOn: prefix + "-infra-controllers"},
	}
}

// layoutCharts are the layout's charts in the order helm installs them.
var layoutCharts = []string{chartIngress, chartCerts, chartApp}

// noopUnits are helmNoopUnits units of one app release each, into
// Namespaces <prefix>-a01 and on.
func noopUnits(prefix string) []helmUnit {
	var us []helmUnit
	for i := 1; i <= helmNoopUnits; i++ {
		name := fmt.Sprintf("%s-a%02d", prefix, i)
		us = append(us, helmUnit{Name: name, Releases: [][2]string{{chartApp, name}}})
	}
	return us
}

// helmRun runs the Helm scenario.
type helmRun struct {
	*testbed
	helmBin, ours, kubeconfig string
	wait                      bool
	dyn                       dynamic.Interface
	repo                      *chartRepository
	// cache is kustomize-deploy's chart cache; helm keeps its own under
	// the bench's HOME.
	cache string
}

func (h *helmRun) run(ctx context.Context) error {
	res := &helmResult{}
	h.rep.Helm = res
	dir := filepath.Join(h.work, "helm")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := writeCharts(filepath.Join(dir, "charts")); err != nil {
		return err
	}
	r, err := serveCharts(filepath.Join(dir, "charts"), filepath.Join(dir, "repository"))
	if err != nil {
		return err
	}
	defer r.Close()
	h.repo = r
	h.cache = filepath.Join(dir, "chart-cache")
	h.progress("helm: charts served at %s", r.URL)
	if err := h.render(ctx, res, filepath.Join(dir, "render")); err != nil {
		return err
	}
	if err := h.layout(ctx, res, filepath.Join(dir, "layout")); err != nil {
		return err
	}
	return h.noop(ctx, res, filepath.Join(dir, "noop"))
}

// step measures one command and prints its line; a failure is noted.
func (h *helmRun) step(ctx context.Context, t tool, args []string, log, title string) (measurement, error) {
	m := measure(ctx, t, args, exitZero, h.home, filepath.Join(h.logs, log), h.timeout)
	if ctx.Err() != nil {
		return m, ctx.Err()
	}
	line := fmt.Sprintf("helm %-16s %-40s %8s  peak RSS %4d MB", t.name, title, fmtDuration(m.Wall), m.MaxRSS>>20)
	if m.Requests != nil {
		line += fmt.Sprintf("  %d API requests", m.Requests.Total)
	}
	h.progress("%s", line)
	if m.Err != nil {
		h.progress("  FAILED: %v", m.Err)
		h.rep.note("helm: %s %s failed: %v", t.name, title, m.Err)
	}
	return m, nil
}

// check fails m when err is set, so that a tool that did less does not
// look fast.
func (h *helmRun) check(m *measurement, who, title string, err error) {
	if err == nil || m.Err != nil {
		return
	}
	h.progress("  CHECK FAILED: %v", err)
	h.rep.note("helm: %s %s: %v", who, title, err)
	m.Err = err
}

// renderedKinds counts the top-level objects of a YAML stream by kind.
func renderedKinds(stream []byte) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(string(stream), "\n") {
		if kind, ok := strings.CutPrefix(line, "kind: "); ok {
			out[strings.TrimSpace(kind)]++
		}
	}
	return out
}

// checkRender says whether a render holds the big chart's objects.
func checkRender(m measurement) error {
	got := renderedKinds(m.Stdout)
	for _, kind := range []string{"Deployment", "Service", "ConfigMap"} {
		if got[kind] != helmBigCount {
			return fmt.Errorf("rendered %d %s(s), want %d (kinds %v)", got[kind], kind, helmBigCount, got)
		}
	}
	return nil
}

// render measures rendering the big chart: ours builds a unit holding its
// HelmRelease, helm templates it from the same repository. The first run
// of each fills its chart cache; the warm runs alternate.
func (h *helmRun) render(ctx context.Context, res *helmResult, dir string) error {
	const ns = "bench-render"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range map[string]string{
		"repository.yaml": helmRepository(ns, h.repo.URL),
		"release.yaml":    helmRelease(chartBig, ns, chartBig, chartBig, ""),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	res.RenderObjects = 3 * helmBigCount
	ours := tool{name: toolOurs, bin: h.ours, keepStdout: true}
	oursArgs := []string{"build", "--path", dir, "--root", dir, "--chart-cache", h.cache}
	helm := tool{name: toolHelm, bin: h.helmBin, keepStdout: true}
	helmArgs := []string{"template", chartBig, chartBig, "--repo", h.repo.URL, "--version", chartVersion, "--namespace", ns}
	one := func(t tool, args []string, key, title string) (measurement, error) {
		m, err := h.step(ctx, t, args, fmt.Sprintf("helm-render-%s-%s.log", shortName(t.name), key), title)
		if err != nil {
			return m, err
		}
		h.check(&m, t.name, title, checkRender(m))
		m.Stdout = nil
		return m, nil
	}
	// Cold: each tool's chart cache emptied before each run (helm keeps
	// its repository cache under the bench's HOME); the last run leaves
	// them filled for the warm runs.
	for i := 1; i <= helmColdRuns; i++ {
		for _, cache := range []string{h.cache, filepath.Join(h.home, ".cache", "helm")} {
			if err := os.RemoveAll(cache); err != nil {
				return err
			}
		}
		title := fmt.Sprintf("render %d objects, cold cache, %d of %d", res.RenderObjects, i, helmColdRuns)
		key := fmt.Sprintf("cold%d", i)
		m, err := one(ours, oursArgs, key, title)
		if err != nil {
			return err
		}
		res.RenderColdOurs = append(res.RenderColdOurs, m)
		if m, err = one(helm, helmArgs, key, title); err != nil {
			return err
		}
		res.RenderColdHelm = append(res.RenderColdHelm, m)
	}
	for i := 1; i <= helmRenderRuns; i++ {
		title := fmt.Sprintf("render %d objects, warm, %d of %d", res.RenderObjects, i, helmRenderRuns)
		key := fmt.Sprintf("warm%d", i)
		m, err := one(ours, oursArgs, key, title)
		if err != nil {
			return err
		}
		res.RenderOurs = append(res.RenderOurs, m)
		if m, err = one(helm, helmArgs, key, title); err != nil {
			return err
		}
		res.RenderHelm = append(res.RenderHelm, m)
	}
	return nil
}

// layout measures the first deploy of the example layout: helm installs
// its three charts one after another, then ours runs the layout's
// configuration. The Namespaces and the certs chart's CRD are deleted,
// untimed, after each.
func (h *helmRun) layout(ctx context.Context, res *helmResult, dir string) error {
	helm := tool{name: toolHelm, bin: h.helmBin}
	var sum measurement
	var namespaces []string
	for _, chart := range layoutCharts {
		ns := "helm-" + chart
		namespaces = append(namespaces, ns)
		args := []string{"upgrade", "--install", chart, chart, "--repo", h.repo.URL, "--version", chartVersion,
			"--namespace", ns, "--create-namespace", "--kubeconfig", h.kubeconfig, "--timeout", "5m"}
		if h.wait {
			args = append(args, "--wait")
		}
		m, err := h.step(ctx, helm, args, "helm-layout-helm-"+chart+".log", "layout: upgrade --install "+chart)
		if err != nil {
			return err
		}
		res.LayoutHelm = append(res.LayoutHelm, m)
		sum.Wall += m.Wall
		sum.MaxRSS = max(sum.MaxRSS, m.MaxRSS)
		if sum.Err == nil && m.Err != nil {
			sum.Err = fmt.Errorf("%s: %w", chart, m.Err)
		}
	}
	h.check(&sum, toolHelm, "layout", h.checkLayout(ctx, "helm"))
	res.LayoutHelmSum = sum
	h.progress("helm %-16s %-40s %8s", toolHelm, "layout: 3 charts one after another, sum", fmtDuration(sum.Wall))
	if err := h.cleanLayout(ctx, toolHelm, namespaces); err != nil {
		return err
	}

	us := layoutUnits("kd")
	config, err := writeHelmRepo(dir, helmLayoutConfig, h.repo.URL, us, h.wait)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("layout: --config, %d units, first deploy", len(us))
	m, err := h.step(ctx, h.configTool(), h.configArgs(dir, config), "helm-layout-kd.log", title)
	if err != nil {
		return err
	}
	h.check(&m, toolOurs, title, h.checkLayout(ctx, "kd"))
	res.LayoutOurs = m
	namespaces = namespaces[:0]
	for _, chart := range layoutCharts {
		namespaces = append(namespaces, "kd-"+chart)
	}
	return h.cleanLayout(ctx, toolOurs, namespaces)
}

// checkLayout counts the Deployments of each chart of the layout in
// Namespace <prefix>-<chart>, and the certs chart's Issuer.
func (h *helmRun) checkLayout(ctx context.Context, prefix string) error {
	var errs []error
	for _, chart := range layoutCharts {
		ns := prefix + "-" + chart
		list, err := h.client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		switch {
		case err != nil:
			errs = append(errs, err)
		case len(list.Items) != layoutDeployments[chart]:
			errs = append(errs, fmt.Errorf("%d Deployment(s) in %s, want %d", len(list.Items), ns, layoutDeployments[chart]))
		}
	}
	issuers := schema.GroupVersionResource{Group: "certs.bench.example", Version: "v1", Resource: "issuers"}
	if _, err := h.dyn.Resource(issuers).Namespace(prefix+"-"+chartCerts).Get(ctx, "default", metav1.GetOptions{}); err != nil {
		errs = append(errs, fmt.Errorf("the certs chart's Issuer: %w", err))
	}
	return errors.Join(errs...)
}

// cleanLayout deletes a copy of the layout (its Namespaces and the certs
// chart's CRD) and waits until the CRD is gone, so the next tool creates
// it again.
func (h *helmRun) cleanLayout(ctx context.Context, who string, namespaces []string) error {
	h.progress("helm %s: deleting namespaces %s and CRD %s (untimed)", who, strings.Join(namespaces, ", "), certsCRD)
	if err := h.deleteNamespaces(ctx, namespaces...); err != nil {
		return err
	}
	crds := h.dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if err := crds.Delete(ctx, certsCRD, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting CRD %s: %w", certsCRD, err)
	}
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, certsCRD, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// noop deploys a configuration of helmNoopUnits HelmReleases of the app
// chart, then re-runs it helmNoopRuns times with nothing changed.
func (h *helmRun) noop(ctx context.Context, res *helmResult, dir string) error {
	us := noopUnits("kd")
	config, err := writeHelmRepo(dir, helmNoopConfig, h.repo.URL, us, h.wait)
	if err != nil {
		return err
	}
	args := h.configArgs(dir, config)
	var names []string
	for _, u := range us {
		names = append(names, u.Name)
	}
	count := func() error {
		var errs []error
		for _, ns := range names {
			list, err := h.client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err == nil && len(list.Items) != 1 {
				err = fmt.Errorf("%d Deployment(s) in %s, want 1", len(list.Items), ns)
			}
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
	title := fmt.Sprintf("%d releases: --config, first deploy", helmNoopUnits)
	if res.NoopFirst, err = h.step(ctx, h.configTool(), args, "helm-noop-kd-first.log", title); err != nil {
		return err
	}
	h.check(&res.NoopFirst, toolOurs, title, count())
	for i := 1; i <= helmNoopRuns; i++ {
		title := fmt.Sprintf("%d releases: --config, no-op %d of %d", helmNoopUnits, i, helmNoopRuns)
		m, err := h.step(ctx, h.configTool(), args, fmt.Sprintf("helm-noop-kd-noop%d.log", i), title)
		if err != nil {
			return err
		}
		h.check(&m, toolOurs, title, count())
		if m.Err == nil {
			dus := make([]dagUnit, len(us))
			for i, u := range us {
				dus[i] = dagUnit{Name: u.Name, Level: 1}
			}
			times, err := unitTimes(m.Stdout, dus)
			if err == nil {
				if changed := changedUnits(times); len(changed) > 0 {
					err = fmt.Errorf("changed unit(s) %s", strings.Join(changed, ", "))
				}
			}
			h.check(&m, toolOurs, title, err)
		}
		m.Stdout = nil
		res.Noop = append(res.Noop, m)
	}
	h.progress("helm %s: deleting namespaces %s to %s (untimed)", toolOurs, names[0], names[len(names)-1])
	return h.deleteNamespaces(ctx, names...)
}

// configTool and configArgs run a configuration with the scenario's chart
// cache.
func (h *helmRun) configTool() tool {
	t, _ := oursConfigTool(h.ours, h.kubeconfig)
	return t
}

func (h *helmRun) configArgs(root, config string) []string {
	_, args := oursConfigTool(h.ours, h.kubeconfig)
	return append(args(root, config), "--chart-cache", h.cache)
}
