package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// The home-ops scenario (--homeops) measures a configuration whose
// Kustomizations are found by building, as the common "home-ops" layout
// has them: one root Kustomization (kubernetes/flux/cluster/ks.yaml) whose
// path holds a kustomization.yaml listing one directory per group; each
// group's kustomization.yaml lists its Namespace and every app's ks.yaml,
// a Flux Kustomization with its own path, postBuild.substitute and a
// shared component. The root's patch gives every app the root's
// substituteFrom (cluster-settings), as home-ops repositories do. Within a
// group, every app depends on the group's first app.
//
// kustomize-deploy runs it with `apply --config kubernetes/flux/cluster`
// (first deploy, then a no-op), and the same objects, rendered, as one
// unit (`apply --path`, first deploy and no-op), in the same bench run.
const (
	homeGroups        = 10
	homeAppsPerGroup  = 10
	homeObjectsPerApp = 30
)

// homeConfigDir is where the root Kustomization is, relative to the
// repository; it names the configuration, so it is no other scenario's.
const homeConfigDir = "kubernetes/flux/cluster"

// Targets of the home-ops scenario (issue 22).
const homeNoopLimit = 1 * time.Second

// homeLayout is one copy of the home-ops layout; Prefix names its
// Namespaces and Kustomizations, so copies do not share a name.
type homeLayout struct {
	Prefix                              string
	Groups, AppsPerGroup, ObjectsPerApp int
}

func newHomeLayout(prefix string) homeLayout {
	return homeLayout{Prefix: prefix, Groups: homeGroups, AppsPerGroup: homeAppsPerGroup, ObjectsPerApp: homeObjectsPerApp}
}

// Namespace is group g's Namespace, which its apps deploy into.
func (l homeLayout) Namespace(g int) string { return fmt.Sprintf("%s-g%02d", l.Prefix, g) }

// App names app a of group g, its Kustomization and its unit.
func (l homeLayout) App(g, a int) string { return fmt.Sprintf("%s-g%02d-a%02d", l.Prefix, g, a) }

// Root names the root Kustomization.
func (l homeLayout) Root() string { return l.Prefix + "-cluster-apps" }

// Namespaces are every group's.
func (l homeLayout) Namespaces() []string {
	out := make([]string, l.Groups)
	for g := range out {
		out[g] = l.Namespace(g)
	}
	return out
}

// Units are the configuration's units in dependency order: the root
// (level 1), each group's first app (level 2, after the root that emits
// it), the other apps (level 3, each after its group's first).
func (l homeLayout) Units() []dagUnit {
	units := []dagUnit{{Name: l.Root(), Level: 1}}
	for g := range l.Groups {
		units = append(units, dagUnit{Name: l.App(g, 0), Level: 2, DependsOn: l.Root()})
	}
	for g := range l.Groups {
		for a := 1; a < l.AppsPerGroup; a++ {
			units = append(units, dagUnit{Name: l.App(g, a), Level: 3, DependsOn: l.App(g, 0)})
		}
	}
	return units
}

// Apps counts the app Kustomizations.
func (l homeLayout) Apps() int { return l.Groups * l.AppsPerGroup }

// Objects counts what the apps deploy; the root adds a Namespace per group.
func (l homeLayout) Objects() int { return l.Apps() * l.ObjectsPerApp }

// ConfigMapsPerApp: every app has a ServiceAccount, a Service and a Secret,
// ConfigMaps for the rest.
func (l homeLayout) ConfigMapsPerApp() int { return l.ObjectsPerApp - 3 }

// homeVars are an app's values: placeholders in the repository, which
// postBuild substitutes, or the values themselves in the rendered copy.
type homeVars struct {
	App, Namespace, Cluster, TZ string
	// Rendered: the objects carry their namespace and the component's
	// label themselves, as the build of the app's Kustomization gives them.
	Rendered bool
}

func (l homeLayout) templateVars() homeVars {
	return homeVars{App: "${APP}", Namespace: "${GROUP_NS}", Cluster: "${CLUSTER_NAME}", TZ: "${TIMEZONE:=UTC}"}
}

func (l homeLayout) renderedVars(g, a int) homeVars {
	return homeVars{App: l.App(g, a), Namespace: l.Namespace(g), Cluster: "bench", TZ: "Europe/Paris", Rendered: true}
}

// homeManagedLabel is the label the shared component adds.
const homeManagedLabel = "home-ops/managed"

func (v homeVars) meta(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "metadata:\n  name: %s\n", name)
	if v.Rendered {
		fmt.Fprintf(&b, "  namespace: %s\n", v.Namespace)
	}
	fmt.Fprintf(&b, "  labels:\n    app.kubernetes.io/name: %s\n    %s: %s\n", v.App, suiteLabel, v.Namespace)
	if v.Rendered {
		fmt.Fprintf(&b, "    %s: \"true\"\n", homeManagedLabel)
	}
	return b.String()
}

// appObjects are an app's ObjectsPerApp objects, as one multi-document
// file.
func (l homeLayout) appObjects(v homeVars) string {
	docs := []string{
		"apiVersion: v1\nkind: ServiceAccount\n" + v.meta(v.App),
		"apiVersion: v1\nkind: Service\n" + v.meta(v.App) +
			fmt.Sprintf("spec:\n  selector:\n    app.kubernetes.io/name: %s\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n", v.App),
		"apiVersion: v1\nkind: Secret\n" + v.meta(v.App+"-secret") +
			fmt.Sprintf("type: Opaque\ndata:\n  password: %s\n", base64.StdEncoding.EncodeToString([]byte("s3cr3t"))),
	}
	for i := range l.ConfigMapsPerApp() {
		docs = append(docs, "apiVersion: v1\nkind: ConfigMap\n"+v.meta(fmt.Sprintf("%s-config-%02d", v.App, i))+
			fmt.Sprintf("data:\n  app: %s\n  cluster: %s\n  tz: %s\n  settings.properties: |\n    log.level=info\n    feature.%d=enabled\n    pool.size=%d\n",
				v.App, v.Cluster, v.TZ, i, 4+i%8))
	}
	return strings.Join(docs, "---\n")
}

func namespaceObject(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    %s: %s\n", name, suiteLabel, name)
}

// rootKustomization is the root: it builds kubernetes/apps, and its patch
// gives every Kustomization it emits the cluster's settings to substitute
// from.
func (l homeLayout) rootKustomization(wait bool) string {
	return fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: %s
  namespace: flux-system
spec:
  interval: 1h
  path: ./kubernetes/apps
  prune: true
  wait: %t
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
  postBuild:
    substituteFrom:
    - kind: ConfigMap
      name: cluster-settings
  patches:
  - patch: |-
      apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata:
        name: _
      spec:
        postBuild:
          substituteFrom:
          - kind: ConfigMap
            name: cluster-settings
    target:
      group: kustomize.toolkit.fluxcd.io
      kind: Kustomization
`, l.Root(), wait)
}

const homeClusterSettings = `apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-settings
  namespace: flux-system
data:
  CLUSTER_NAME: bench
  TIMEZONE: Europe/Paris
`

// homeComponent is the component every app uses.
const homeComponent = `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
labels:
- pairs:
    ` + homeManagedLabel + `: "true"
`

// appKustomization is app a of group g's ks.yaml.
func (l homeLayout) appKustomization(g, a int, wait bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: %[1]s
  namespace: flux-system
spec:
`, l.App(g, a))
	if a > 0 {
		fmt.Fprintf(&b, "  dependsOn:\n  - name: %s\n", l.App(g, 0))
	}
	fmt.Fprintf(&b, `  interval: 1h
  path: ./kubernetes/apps/%[2]s/%[1]s/app
  prune: true
  wait: %[3]t
  timeout: 5m
  targetNamespace: %[2]s
  components:
  - ../../../../components/common
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
  postBuild:
    substitute:
      APP: %[1]s
      GROUP_NS: %[2]s
`, l.App(g, a), l.Namespace(g), wait)
	return b.String()
}

// Write replaces root with a Git repository of the layout (one commit)
// and returns the root Kustomization's directory, what --config names.
func (l homeLayout) Write(ctx context.Context, root string, wait bool) (string, error) {
	if err := os.RemoveAll(root); err != nil {
		return "", err
	}
	files := map[string]string{
		filepath.Join(homeConfigDir, "ks.yaml"):               l.rootKustomization(wait),
		filepath.Join(homeConfigDir, "cluster-settings.yaml"): homeClusterSettings,
		"kubernetes/components/common/kustomization.yaml":     homeComponent,
	}
	var groups []string
	for g := range l.Groups {
		ns := l.Namespace(g)
		groups = append(groups, "./"+ns)
		group := []string{"./namespace.yaml"}
		files[filepath.Join("kubernetes/apps", ns, "namespace.yaml")] = namespaceObject(ns)
		for a := range l.AppsPerGroup {
			app := l.App(g, a)
			dir := filepath.Join("kubernetes/apps", ns, app)
			group = append(group, "./"+app+"/ks.yaml")
			files[filepath.Join(dir, "ks.yaml")] = l.appKustomization(g, a, wait)
			files[filepath.Join(dir, "app/kustomization.yaml")] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ./objects.yaml\n"
			files[filepath.Join(dir, "app/objects.yaml")] = l.appObjects(l.templateVars())
		}
		files[filepath.Join("kubernetes/apps", ns, "kustomization.yaml")] = kustomizationOf(group)
	}
	files["kubernetes/apps/kustomization.yaml"] = kustomizationOf(groups)
	for p, body := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	if err := gitCommit(ctx, root); err != nil {
		return "", err
	}
	return filepath.Join(root, homeConfigDir), nil
}

// WriteRendered replaces dir with the objects the layout deploys, as its
// builds render them (values substituted, namespace and the component's
// label set): the group Namespaces, then one file per app. Applied with
// --path, they are one unit of the same objects.
func (l homeLayout) WriteRendered(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var nss []string
	for _, ns := range l.Namespaces() {
		nss = append(nss, namespaceObject(ns))
	}
	if err := os.WriteFile(filepath.Join(dir, "namespaces.yaml"), []byte(strings.Join(nss, "---\n")), 0o644); err != nil {
		return err
	}
	for g := range l.Groups {
		for a := range l.AppsPerGroup {
			body := l.appObjects(l.renderedVars(g, a))
			if err := os.WriteFile(filepath.Join(dir, l.App(g, a)+".yaml"), []byte(body), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func kustomizationOf(resources []string) string {
	return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + strings.Join(resources, "\n- ") + "\n"
}

// gitCommit makes dir a repository of one commit: the configuration's
// root and revision come from its work tree, as in a checkout.
func gitCommit(ctx context.Context, dir string) error {
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.email=bench@example.com", "-c", "user.name=bench", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "home-ops bench"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s in %s: %w\n%s", strings.Join(args, " "), dir, err, out)
		}
	}
	return nil
}

// homeResult is what the home-ops scenario measured.
type homeResult struct {
	// First and Noop are `apply --config` of the layout; FirstUnits and
	// NoopUnits its units' times from the JSON result.
	First, Noop           measurement
	FirstUnits, NoopUnits []unitTime
	// FirstBuilds and NoopBuilds are the kustomize builds each made (the
	// JSON result's builds): each unit at most once.
	FirstBuilds, NoopBuilds int
	// FirstRenders and NoopRenders are the renderings each made (the JSON
	// result's renders), and the units rendered more than once in either
	// (renderedTwice): none, each unit rendered once.
	FirstRenders, NoopRenders int
	RenderedTwice             []string
	// SingleFirst and SingleNoop are the same objects as one unit.
	SingleFirst, SingleNoop measurement
	// Profile is a CPU profile of a further no-op of the layout (not
	// timed here), for `go tool pprof`.
	Profile string
}

// homeRun runs the home-ops scenario: ours with the objects as one unit
// (first deploy, no-op), then the layout (first deploy, no-op). Each copy
// has its own names (kdh1-…, kdh-…) and its Namespaces are deleted,
// untimed, after it.
type homeRun struct {
	*testbed
	ours       tool
	kubeconfig string
	wait       bool
}

func (h *homeRun) run(ctx context.Context) error {
	res := &homeResult{}
	h.rep.Home = res
	if err := h.runSingle(ctx, res); err != nil {
		return err
	}
	return h.runConfig(ctx, res)
}

// step measures one command, reads its JSON result and checks it: every
// unit (want of them) there and ready, nothing changed by a no-op, and
// every group's ConfigMaps in the cluster, substituted and labelled by the
// component. A failed check fails the measurement, so that a run that did
// less does not look fast.
func (h *homeRun) step(ctx context.Context, t tool, args []string, log, title string, l homeLayout, want []dagUnit, noop bool) (measurement, []unitTime, error) {
	meas := measure(ctx, t, args, exitZero, h.home, filepath.Join(h.logs, log), h.timeout)
	if ctx.Err() != nil {
		return meas, nil, ctx.Err()
	}
	line := fmt.Sprintf("home-ops %-60s %8s  CPU %8s  peak RSS %4d MB", title, fmtDuration(meas.Wall), fmtDuration(meas.CPU), meas.MaxRSS>>20)
	if meas.Requests != nil {
		line += fmt.Sprintf("  %d API requests", meas.Requests.Total)
	}
	h.progress("%s", line)
	fail := func(err error) {
		h.progress("  FAILED: %v", err)
		h.rep.note("home-ops: %s: %v", title, err)
		if meas.Err == nil {
			meas.Err = err
		}
	}
	if meas.Err != nil {
		fail(meas.Err)
		return meas, nil, nil
	}
	var times []unitTime
	var err error
	if len(want) == 1 && want[0].Level == 0 {
		times, err = singleTime(meas.Stdout, want[0].Name)
	} else {
		times, err = unitTimes(meas.Stdout, want)
	}
	if err != nil {
		fail(err)
	}
	if len(times) > 0 && want[0].Level > 0 {
		h.progress("  %s", levelSummary(times))
	}
	var errs []error
	for _, u := range times {
		if !u.Ready {
			errs = append(errs, fmt.Errorf("unit %s is not ready", u.Name))
		}
	}
	if noop {
		if changed := changedUnits(times); len(changed) > 0 {
			errs = append(errs, fmt.Errorf("the no-op changed unit(s) %s", strings.Join(changed, ", ")))
		}
	}
	errs = append(errs, h.checkGroups(ctx, l))
	if err := errors.Join(errs...); err != nil {
		fail(err)
	}
	return meas, times, nil
}

// singleTime reads the JSON result of an apply --path run (one unit's
// result) as the times of its one unit, name.
func singleTime(stdout []byte, name string) ([]unitTime, error) {
	var r result.Result
	if err := json.Unmarshal(stdout, &r); err != nil {
		return nil, fmt.Errorf("reading the JSON result: %w", err)
	}
	if r.Unit != name {
		return nil, fmt.Errorf("the JSON result is unit %q's, want %s's", r.Unit, name)
	}
	took, err := time.ParseDuration(r.Duration)
	if err != nil && r.Duration != "" {
		return nil, fmt.Errorf("unit %s: duration %q: %w", r.Unit, r.Duration, err)
	}
	return []unitTime{{Name: r.Unit, Took: took, Ready: r.Ready, Counts: r.Counts}}, nil
}

// checkGroups counts every group's ConfigMaps carrying the substituted
// suite label and the component's label.
func (h *homeRun) checkGroups(ctx context.Context, l homeLayout) error {
	var errs []error
	want := l.AppsPerGroup * l.ConfigMapsPerApp()
	for _, ns := range l.Namespaces() {
		list, err := h.client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{
			LabelSelector: fmt.Sprintf("%s=%s,%s=true", suiteLabel, ns, homeManagedLabel),
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(list.Items) != want {
			errs = append(errs, fmt.Errorf("%d ConfigMaps labelled by the suite and the component in %s, want %d", len(list.Items), ns, want))
		}
	}
	return errors.Join(errs...)
}

func (h *homeRun) deleteGroups(ctx context.Context, what string, l homeLayout) error {
	nss := l.Namespaces()
	h.progress("home-ops %s: deleting namespaces %s to %s (untimed)", what, nss[0], nss[len(nss)-1])
	return h.deleteNamespaces(ctx, nss...)
}

// runSingle deploys the rendered objects as one unit, twice.
func (h *homeRun) runSingle(ctx context.Context, res *homeResult) error {
	l := newHomeLayout("kdh1")
	dir := filepath.Join(h.work, "home-single")
	if err := l.WriteRendered(dir); err != nil {
		return err
	}
	t := h.ours
	t.keepStdout = true
	args := append(t.apply("kdh1-all", dir), "--output", "json")
	want := []dagUnit{{Name: "kdh1-all"}}
	total := thousands(l.Objects() + l.Groups)
	var err error
	if res.SingleFirst, _, err = h.step(ctx, t, args, "home-single-first.log",
		fmt.Sprintf("one unit of %s objects (--path), first deploy", total), l, want, false); err != nil {
		return err
	}
	if res.SingleNoop, _, err = h.step(ctx, t, args, "home-single-noop.log",
		fmt.Sprintf("one unit of %s objects (--path), no-op", total), l, want, true); err != nil {
		return err
	}
	return h.deleteGroups(ctx, "one unit", l)
}

// configArgs runs the configuration whose root Kustomization is in dir;
// the repository's root and revision come from its Git work tree. Wait,
// prune and timeout are each Kustomization's own.
func (h *homeRun) configArgs(dir string) []string {
	return []string{"apply", "--config", dir, "--kubeconfig", h.kubeconfig, "--inventory-namespace", "default", "--output", "json"}
}

// runConfig runs the layout: first deploy, no-op, then a no-op with a CPU
// profile, whose time is only logged.
func (h *homeRun) runConfig(ctx context.Context, res *homeResult) error {
	l := newHomeLayout("kdh")
	config, err := l.Write(ctx, filepath.Join(h.work, "home-ops"), h.wait)
	if err != nil {
		return err
	}
	t := tool{name: toolOurs, bin: h.ours.bin, counts: true, keepStdout: true}
	args := h.configArgs(config)
	units := l.Units()
	what := fmt.Sprintf("--config, 1 root + %d apps found by building", l.Apps())
	if res.First, res.FirstUnits, err = h.step(ctx, t, args, "home-config-first.log", what+", first deploy", l, units, false); err != nil {
		return err
	}
	if res.Noop, res.NoopUnits, err = h.step(ctx, t, args, "home-config-noop.log", what+", no-op", l, units, true); err != nil {
		return err
	}
	first, noop := setCounts(res.First.Stdout), setCounts(res.Noop.Stdout)
	res.FirstBuilds, res.NoopBuilds = first.Builds, noop.Builds
	res.FirstRenders, res.NoopRenders = first.Renders, noop.Renders
	res.RenderedTwice = append(first.RenderedTwice, noop.RenderedTwice...)
	h.progress("  builds: %d in the first deploy, %d in the no-op; renders: %d and %d (rendered twice: %v), for %d units",
		res.FirstBuilds, res.NoopBuilds, res.FirstRenders, res.NoopRenders, res.RenderedTwice, len(units))
	profile := filepath.Join(h.logs, "home-config-noop.cpu.pprof")
	t.env = append(t.env, cpuProfileEnv+"="+profile)
	if _, _, err := h.step(ctx, t, args, "home-config-noop-profiled.log", what+", no-op with a CPU profile (not reported)", l, units, true); err != nil {
		return err
	}
	if _, err := os.Stat(profile); err == nil {
		res.Profile = profile
		h.progress("  CPU profile of a no-op: go tool pprof -top %s %s", h.ours.bin, profile)
	}
	return h.deleteGroups(ctx, "--config", l)
}

// cpuProfileEnv makes kustomize-deploy write a CPU profile of its command
// (see cmd/kustomize-deploy).
const cpuProfileEnv = "KUSTOMIZE_DEPLOY_CPUPROFILE"

// homeSplit is where a run of the layout spent its time, from its units'
// times: from its first unit's start to its last unit's end, and the rest
// of its wall time (starting, reading the configuration and building every
// unit to find the Kustomizations it emits, which happens before the
// result's clock starts, and ending).
func homeSplit(wall time.Duration, times []unitTime) (units, rest time.Duration, ok bool) {
	if len(times) == 0 || wall <= 0 {
		return 0, 0, false
	}
	first, last := times[0].Start, times[0].Start+times[0].Took
	for _, t := range times {
		first, last = min(first, t.Start), max(last, t.Start+t.Took)
	}
	return last - first, wall - (last - first), true
}

// homeOps renders the home-ops scenario: its runs, its units by level,
// where a no-op spends its time, and the ratios to one unit of the same
// objects.
func (r *report) homeOps() string {
	h := r.Home
	if h == nil {
		return ""
	}
	l := newHomeLayout("")
	total := thousands(l.Objects() + l.Groups)
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Home-ops layout: %d Kustomizations found by building\n\n", l.Apps())
	fmt.Fprintf(&b, "A Git repository laid out as home-ops repositories are: a root Kustomization (`%s/ks.yaml`, substituting from a cluster-settings ConfigMap, "+
		"its patch giving every Kustomization it emits the same) builds `kubernetes/apps`, whose kustomization.yaml lists %d group directories; "+
		"each group's kustomization.yaml lists its Namespace and %d apps' `ks.yaml`, Flux Kustomizations with their own path, `postBuild.substitute`, "+
		"a shared component (a label) and `targetNamespace`; within a group every app depends on the first. "+
		"Each app deploys %d objects (a ServiceAccount, a Service, a Secret, %d ConfigMaps; no Deployment), %s in all with the %d Namespaces the root applies. "+
		"kustomize-deploy runs it with `apply --config %s` (the root Kustomization's directory; prune and wait per Kustomization, `wait: %t`), "+
		"and deploys the same %s objects, rendered, as one unit (`apply --path`); each copy has its own Namespaces, deleted untimed after it. "+
		"Every run's exit code, its units' readiness, each group's ConfigMaps (substituted and labelled by the component) and, for a no-op, that nothing changed are checked.\n\n",
		homeConfigDir, l.Groups, l.AppsPerGroup, l.ObjectsPerApp, l.ConfigMapsPerApp(), total, l.Groups, homeConfigDir, r.Wait, total)
	b.WriteString("| run | time | CPU (user + system) | peak RSS | API requests |\n|---|---:|---:|---:|---|\n")
	for _, row := range []struct {
		what string
		m    measurement
	}{
		{fmt.Sprintf("`--config`, first deploy of 1 root + %d apps", l.Apps()), h.First},
		{fmt.Sprintf("`--config`, no-op of 1 root + %d apps", l.Apps()), h.Noop},
		{fmt.Sprintf("the %s objects as one unit (`--path`), first deploy", total), h.SingleFirst},
		{fmt.Sprintf("the %s objects as one unit (`--path`), no-op", total), h.SingleNoop},
	} {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", row.what, cellOf(row.m), cpu(row.m), rss(row.m), requests(row.m))
	}
	if len(h.FirstUnits)+len(h.NoopUnits) > 0 {
		b.WriteString("\n`--config` by level (1: the root; 2: each group's first app; 3: the others; seconds since its units started, from `--output json`):\n\n")
		b.WriteString("| run | level | units | started | each took | last done | not ready |\n|---|---:|---:|---|---|---:|---:|\n")
		for _, run := range []struct {
			what  string
			times []unitTime
		}{{"first deploy", h.FirstUnits}, {"no-op", h.NoopUnits}} {
			for _, s := range byLevel(run.times) {
				fmt.Fprintf(&b, "| %s | %d | %d | %.1f–%.1f | %.1f–%.1f | %.1f | %d |\n", run.what, s.Level, s.Units,
					s.FirstStart.Seconds(), s.LastStart.Seconds(), s.Shortest.Seconds(), s.Longest.Seconds(), s.LastEnd.Seconds(), s.NotReady)
			}
		}
	}
	for _, run := range []struct {
		what  string
		m     measurement
		times []unitTime
	}{{"first deploy", h.First, h.FirstUnits}, {"no-op", h.Noop, h.NoopUnits}} {
		if units, rest, ok := homeSplit(run.m.Wall, run.times); ok {
			fmt.Fprintf(&b, "\nThe %s took %s: its units ran for %s (first start to last end); the other %s are before and after them: "+
				"starting, reading the configuration and building every unit to find the Kustomizations it emits.", run.what,
				fmtDuration(run.m.Wall), fmtDuration(units), fmtDuration(rest))
		}
	}
	b.WriteString("\n")
	if h.Profile != "" {
		fmt.Fprintf(&b, "A CPU profile of a further no-op is in `%s` (`go tool pprof -top BIN FILE`).\n", h.Profile)
	}
	b.WriteString("\n| target | measured | met |\n|---|---|---|\n")
	ratioRow := func(what string, ours, single measurement) {
		if ours.Err != nil || single.Err != nil || ours.Wall <= 0 || single.Wall <= 0 {
			fmt.Fprintf(&b, "| %s | not measured | – |\n", what)
			return
		}
		fmt.Fprintf(&b, "| %s | %.2f× (%s vs %s) | – |\n", what, ratio(ours.Wall, single.Wall), fmtDuration(ours.Wall), fmtDuration(single.Wall))
	}
	ratioRow("home-ops, first deploy ÷ one unit's first deploy", h.First, h.SingleFirst)
	ratioRow("home-ops, no-op ÷ one unit's no-op", h.Noop, h.SingleNoop)
	r.homeNoopRow(&b)
	return b.String()
}

// cpu is m's CPU time, "–" when not known.
func cpu(m measurement) string {
	if m.CPU <= 0 {
		return "–"
	}
	return fmtDuration(m.CPU)
}

// homeNoopRow is the target on the layout's no-op: its time, and each
// unit built and rendered at most once in it and in the first deploy
// (the builds and renders counted by the JSON result).
func (r *report) homeNoopRow(b *strings.Builder) {
	units := 1 + homeGroups*homeAppsPerGroup
	target := fmt.Sprintf("home-ops, no-op of %d Kustomizations found by building ≤ %s, each unit built and rendered at most once", homeGroups*homeAppsPerGroup, fmtDuration(homeNoopLimit))
	h := r.Home
	if h == nil || h.Noop.Err != nil || h.Noop.Wall <= 0 {
		fmt.Fprintf(b, "| %s | not measured | – |\n", target)
		return
	}
	once := h.NoopBuilds <= units && h.FirstBuilds <= units && h.NoopRenders <= units && h.FirstRenders <= units && len(h.RenderedTwice) == 0
	twice := "none twice"
	if len(h.RenderedTwice) > 0 {
		twice = fmt.Sprintf("%d twice", len(h.RenderedTwice))
	}
	fmt.Fprintf(b, "| %s | %s; builds: %d (no-op), %d (first deploy); renders: %d (no-op), %d (first deploy), %s; for %d units | %s |\n", target, fmtDuration(h.Noop.Wall),
		h.NoopBuilds, h.FirstBuilds, h.NoopRenders, h.FirstRenders, twice, units, yesNo(h.Noop.Wall <= homeNoopLimit && once))
}

// setCounts is what a configuration's JSON result counts (builds,
// renders), zero when it does not read.
func setCounts(stdout []byte) result.Set {
	var set result.Set
	if json.Unmarshal(stdout, &set) != nil {
		return result.Set{}
	}
	return set
}

// homeTargets adds the scenario's target to the targets table when it
// ran.
func (r *report) homeTargets(b *strings.Builder) {
	if r.Home != nil {
		r.homeNoopRow(b)
	}
}
