package main

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

// report collects measurements and renders them as markdown.
type report struct {
	Started, Finished time.Time
	Sizes             []int
	Tools             []string
	Versions          map[string]string
	Wait              bool
	// Results by size, scenario key and tool.
	Results map[int]map[string]map[string]measurement
	// Repeats are the extra pairs of first deploys by size
	// (--repeat-first).
	Repeats map[int][]firstPair
	// Multi is the many-unit scenario; nil when not run.
	Multi *multiResult
	// Helm is the Helm scenario; nil when not run.
	Helm *helmResult
	// Home is the home-ops scenario; nil when not run.
	Home *homeResult
	// Render is the whole-repository render scenario; nil when not run.
	Render *renderResult
	Notes  []string
}

func (r *report) add(n int, scenario, tool string, m measurement) {
	if r.Results == nil {
		r.Results = map[int]map[string]map[string]measurement{}
	}
	if r.Results[n] == nil {
		r.Results[n] = map[string]map[string]measurement{}
	}
	if r.Results[n][scenario] == nil {
		r.Results[n][scenario] = map[string]measurement{}
	}
	r.Results[n][scenario][tool] = m
}

func (r *report) addRepeat(n int, p firstPair) {
	if r.Repeats == nil {
		r.Repeats = map[int][]firstPair{}
	}
	r.Repeats[n] = append(r.Repeats[n], p)
}

func (r *report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

func (r *report) get(n int, scenario, tool string) (measurement, bool) {
	m, ok := r.Results[n][scenario][tool]
	return m, ok && m.Err == nil
}

// Markdown renders the whole report.
func (r *report) Markdown() string {
	var b strings.Builder
	b.WriteString("# kustomize-deploy benchmark\n\n")
	fmt.Fprintf(&b, "Run %s on %s/%s with %d CPUs, %s, against the local control plane (internal/testcluster); took %s.\n\n",
		r.Started.UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(),
		r.Finished.Sub(r.Started).Round(time.Second))
	b.WriteString("| tool | version | command |\n|---|---|---|\n")
	cmds := map[string]string{
		toolKubectl:   "`KUBECTL_APPLYSET=true kubectl apply --server-side --prune --applyset=<suite>`; `kubectl diff --server-side`",
		toolKapp:      "`kapp deploy --yes`; `kapp deploy --diff-run`",
		toolOurs:      fmt.Sprintf("`kustomize-deploy apply --wait=%t`; `kustomize-deploy diff` (defaults: server-side validation, prune)", r.Wait),
		toolHelm:      helmCommands(r.Wait),
		toolKustomize: "`kustomize build` (the render scenario's peer, with `helm template`)",
	}
	tools := r.Tools
	if r.Helm != nil || r.Render != nil {
		tools = append(slices.Clone(tools), toolHelm)
	}
	if r.Render != nil {
		tools = append(tools, toolKustomize)
	}
	for _, t := range tools {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t, r.Versions[t], cmds[t])
	}
	b.WriteString("\nEvery tool runs as a subprocess with its own client defaults (kubectl's rate limits included). " +
		"Objects: one Namespace, 1% each of Deployments (1 replica), Services and Secrets, ConfigMaps for the rest; one file per object. " +
		"\"10% changed\" changes every Deployment's pod template and ConfigMaps for the rest; \"prune 10%\" removes ConfigMaps from the manifests. " +
		"Times are wall-clock seconds; ratios are kustomize-deploy's time over the peer's (below 1 means faster). " +
		"Peak RSS is the process's maximum resident set (rusage); API requests are counted by kustomize-deploy's client " +
		"(KUSTOMIZE_DEPLOY_COUNT_REQUESTS), dry-runs apart. " +
		"kubectl's ApplySet parent is a Secret in the suite's Namespace, so that Namespace is created (untimed) before kubectl's first deploy; " +
		"kubectl diff has no --applyset and reports the ApplySet label as a difference.\n")
	for _, n := range r.Sizes {
		fmt.Fprintf(&b, "\n## N = %d objects\n\n", n)
		b.WriteString("| scenario | kubectl | kapp | kustomize-deploy | ours/kubectl | ours/kapp | ours peak RSS | ours API requests |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---|\n")
		for _, sc := range scenarios {
			fmt.Fprintf(&b, "| %s", sc.title)
			for _, t := range r.Tools {
				fmt.Fprintf(&b, " | %s", r.cell(n, sc.key, t))
			}
			ours, ok := r.get(n, sc.key, toolOurs)
			for _, peer := range []string{toolKubectl, toolKapp} {
				p, pok := r.get(n, sc.key, peer)
				if ok && pok && p.Wall > 0 {
					fmt.Fprintf(&b, " | %.2f×", ratio(ours.Wall, p.Wall))
				} else {
					b.WriteString(" | –")
				}
			}
			if m, present := r.Results[n][sc.key][toolOurs]; present {
				fmt.Fprintf(&b, " | %d MB | %s |\n", m.MaxRSS>>20, requests(m))
			} else {
				b.WriteString(" | – | – |\n")
			}
		}
		b.WriteString(r.phases(n))
		b.WriteString("\nPeak RSS over all scenarios:")
		for _, t := range r.Tools {
			var peak int64
			for _, sc := range scenarios {
				if m, ok := r.Results[n][sc.key][t]; ok && m.MaxRSS > peak {
					peak = m.MaxRSS
				}
			}
			if peak > 0 {
				fmt.Fprintf(&b, " %s %d MB;", t, peak>>20)
			}
		}
		b.WriteString("\n")
		b.WriteString(r.repeats(n))
	}
	b.WriteString(r.multi())
	b.WriteString(r.homeOps())
	b.WriteString(r.helm())
	if r.Render != nil {
		b.WriteString(r.render())
	}
	b.WriteString(r.targets())
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// phaseNames in the order kustomize-deploy runs them; "start" is
// everything before the build (connecting, discovery, reading the
// inventory).
var phaseNames = []string{"start", "build", "validate", "apply", "prune", "wait"}

// phases breaks kustomize-deploy's apply runs at size n down by step,
// from the times its progress lines appeared.
func (r *report) phases(n int) string {
	var b strings.Builder
	b.WriteString("\nkustomize-deploy apply by step (seconds; validate includes writing the inventory, apply includes pruning's inventory write):\n\n")
	b.WriteString("| scenario | " + strings.Join(phaseNames, " | ") + " |\n|---|" + strings.Repeat("---:|", len(phaseNames)) + "\n")
	rows := 0
	for _, sc := range scenarios {
		m, ok := r.Results[n][sc.key][toolOurs]
		if !ok || len(m.Phases) == 0 {
			continue
		}
		d := phaseDurations(m)
		fmt.Fprintf(&b, "| %s", sc.title)
		for _, p := range phaseNames {
			if v, ok := d[p]; ok {
				fmt.Fprintf(&b, " | %.1f", v.Seconds())
			} else {
				b.WriteString(" | –")
			}
		}
		b.WriteString(" |\n")
		rows++
	}
	if rows == 0 {
		return ""
	}
	return b.String()
}

// phaseDurations turns phase start times into durations, the last phase
// lasting until the process ended.
func phaseDurations(m measurement) map[string]time.Duration {
	ps := append([]phase{{Name: "start"}}, m.Phases...)
	d := map[string]time.Duration{}
	for i, p := range ps {
		end := m.Wall
		if i+1 < len(ps) {
			end = ps[i+1].Start
		}
		d[p.Name] += end - p.Start
	}
	return d
}

func (r *report) cell(n int, scenario, tool string) string {
	m, ok := r.Results[n][scenario][tool]
	if !ok {
		return "–"
	}
	return cellOf(m)
}

// cellOf is a measurement's time, or that it failed.
func cellOf(m measurement) string {
	switch {
	case m.Err != nil:
		return fmt.Sprintf("failed (%s)", fmtDuration(m.Wall))
	case m.Wall == 0:
		return "–"
	}
	return fmtDuration(m.Wall)
}

// firstLimit is the target for ours over kapp on a first deploy, and
// firstMedian for the median of the repeated pairs; bareLimit is the
// target for ours over the bare creates (the API server's floor).
const (
	firstLimit  = 0.5
	firstMedian = 0.4
	bareLimit   = 1.2
)

// repeats renders the extra pairs of first deploys at size n.
func (r *report) repeats(n int) string {
	pairs := r.Repeats[n]
	if len(pairs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### First deploy, repeated\n\n"+
		"Extra pairs of first deploys (--repeat-first %d), kapp then kustomize-deploy, each into a fresh Namespace (and app, and unit) deleted untimed afterwards; "+
		"then the same objects as bare creates: server-side applies sent by the bench itself with kustomize-deploy's client settings and %d in flight, no build, no inventory, no wait (the API server's floor); "+
		"its files are read before its clock starts. \"Rolled out\" is the bare creates' time until their Deployments were rolled out as well (polled every %s): the floor of a run that waits for health.\n\n", len(pairs), bareParallel, rolloutPoll)
	fmt.Fprintf(&b, "| run | kapp | kustomize-deploy | bare creates | rolled out | ours/kapp | ≤ %.1f× | ours/bare | ours/rolled out |\n|---|---:|---:|---:|---:|---:|---|---:|---:|\n", firstLimit)
	for i, p := range pairs {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s", i+1, cellOf(p.Kapp), cellOf(p.Ours), cellOf(p.Bare), cellOf(measurement{Wall: p.Bare.RolledOut}))
		if q, ok := p.ratio(); ok {
			fmt.Fprintf(&b, " | %.2f× | %s", q, yesNo(q <= firstLimit))
		} else {
			b.WriteString(" | – | no")
		}
		if q, ok := p.bareRatio(); ok {
			fmt.Fprintf(&b, " | %.2f×", q)
		} else {
			b.WriteString(" | –")
		}
		if q, ok := p.rolloutRatio(); ok {
			fmt.Fprintf(&b, " | %.2f× |\n", q)
		} else {
			b.WriteString(" | – |\n")
		}
	}
	k, _ := r.repeatsUnder(n)
	fmt.Fprintf(&b, "\n%d of %d under %.1f× kapp.", k, len(pairs), firstLimit)
	if m, ok := medianOf(pairs, firstPair.ratio); ok {
		fmt.Fprintf(&b, " Median ours/kapp %.2f×.", m)
	}
	if m, ok := medianOf(pairs, firstPair.bareRatio); ok {
		fmt.Fprintf(&b, " Median ours/bare creates %.2f×.", m)
	}
	if m, ok := medianOf(pairs, firstPair.rolloutRatio); ok {
		fmt.Fprintf(&b, " Median ours/bare creates rolled out %.2f×.", m)
	}
	b.WriteString("\n")
	return b.String()
}

// medianOf is the median of ratio over the pairs where it is defined;
// false when none is, or any pair failed.
func medianOf(pairs []firstPair, ratio func(firstPair) (float64, bool)) (float64, bool) {
	var qs []float64
	for _, p := range pairs {
		q, ok := ratio(p)
		if !ok {
			return 0, false
		}
		qs = append(qs, q)
	}
	if len(qs) == 0 {
		return 0, false
	}
	sort.Float64s(qs)
	if len(qs)%2 == 1 {
		return qs[len(qs)/2], true
	}
	return (qs[len(qs)/2-1] + qs[len(qs)/2]) / 2, true
}

// repeatsUnder counts the extra pairs at size n where ours took at most
// firstLimit of kapp's time, and lists every pair's ratio.
func (r *report) repeatsUnder(n int) (int, []string) {
	k := 0
	var ratios []string
	for _, p := range r.Repeats[n] {
		q, ok := p.ratio()
		if !ok {
			ratios = append(ratios, "failed")
			continue
		}
		ratios = append(ratios, fmt.Sprintf("%.2f", q))
		if q <= firstLimit {
			k++
		}
	}
	return k, ratios
}

// Targets of the many-unit scenario.
const (
	multiVsKapp   = 0.35
	multiVsSingle = 1.3
	multiNoop     = time.Second
)

// multi renders the many-unit scenario with its targets.
func (r *report) multi() string {
	m := r.Multi
	if m == nil {
		return ""
	}
	var b strings.Builder
	total := thousands(multiUnits * multiObjects)
	fmt.Fprintf(&b, "\n## %d units of %d objects in a %d-level dependency graph\n\n", multiUnits, multiObjects, len(multiLevels))
	w := newWorkload("", multiObjects)
	fmt.Fprintf(&b, "Units at each level: %s; every unit depends on one unit of the level above. "+
		"Each unit is a Namespace with %d Deployment, %d Service, %d Secret and %d ConfigMaps (%s objects in all). "+
		"kapp deploys the units one after another in dependency order (`kapp deploy -a <unit> --yes`), as a pipeline without an order between apps must; "+
		"kustomize-deploy runs a directory of Flux Kustomizations (`apply --config`, default `--parallel 4`, prune and wait per Kustomization), "+
		"and for comparison deploys the same %s objects as one unit. Each copy has its own Namespaces, deleted untimed before the next.\n\n",
		levelList(), w.Workloads, w.Workloads, w.Workloads, w.ConfigMaps, total, total)
	b.WriteString("| run | time | peak RSS | API requests |\n|---|---:|---:|---|\n")
	fmt.Fprintf(&b, "| kapp, %d units one after another (sum) | %s | %s | – |\n", len(m.Kapp), cellOf(m.KappSum), rss(m.KappSum))
	for _, row := range []struct {
		what string
		m    measurement
	}{
		{fmt.Sprintf("kustomize-deploy, the %s objects as one unit", total), m.Single},
		{fmt.Sprintf("kustomize-deploy `--config`, first deploy of %d units", multiUnits), m.First},
		{fmt.Sprintf("kustomize-deploy `--config`, no-op of %d units", multiUnits), m.Noop},
	} {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row.what, cellOf(row.m), rss(row.m), requests(row.m))
	}
	if len(m.Kapp) > 0 {
		lo, hi := m.Kapp[0].Wall, m.Kapp[0].Wall
		for _, k := range m.Kapp {
			lo, hi = min(lo, k.Wall), max(hi, k.Wall)
		}
		fmt.Fprintf(&b, "\nkapp took %s to %s per unit.\n", fmtDuration(lo), fmtDuration(hi))
	}
	if len(m.FirstUnits)+len(m.NoopUnits) > 0 {
		b.WriteString("\nkustomize-deploy `--config` by level (seconds since its units started, from `--output json`):\n\n")
		b.WriteString("| run | level | units | started | each took | last done | not ready |\n|---|---:|---:|---|---|---:|---:|\n")
		for _, run := range []struct {
			what  string
			times []unitTime
		}{{"first deploy", m.FirstUnits}, {"no-op", m.NoopUnits}} {
			for _, s := range byLevel(run.times) {
				fmt.Fprintf(&b, "| %s | %d | %d | %.1f–%.1f | %.1f–%.1f | %.1f | %d |\n", run.what, s.Level, s.Units,
					s.FirstStart.Seconds(), s.LastStart.Seconds(), s.Shortest.Seconds(), s.Longest.Seconds(), s.LastEnd.Seconds(), s.NotReady)
			}
		}
	}
	b.WriteString("\n| target | measured | met |\n|---|---|---|\n")
	vs := func(target string, ours, peer measurement, limit float64) {
		if ours.Err != nil || peer.Err != nil || ours.Wall <= 0 || peer.Wall <= 0 {
			fmt.Fprintf(&b, "| %s | not measured | – |\n", target)
			return
		}
		q := ratio(ours.Wall, peer.Wall)
		fmt.Fprintf(&b, "| %s | %.2f× (%s vs %s) | %s |\n", target, q, fmtDuration(ours.Wall), fmtDuration(peer.Wall), yesNo(q <= limit))
	}
	vs(fmt.Sprintf("many units, first deploy ≤ %.2f× kapp's %d deploys one after another", multiVsKapp, multiUnits), m.First, m.KappSum, multiVsKapp)
	vs(fmt.Sprintf("many units, first deploy ≤ %.1f× one unit of the same %s objects", multiVsSingle, total), m.First, m.Single, multiVsSingle)
	target := fmt.Sprintf("many units, no-op of all %d ≤ %s", multiUnits, fmtDuration(multiNoop))
	if m.Noop.Err != nil || m.Noop.Wall <= 0 {
		fmt.Fprintf(&b, "| %s | not measured | – |\n", target)
	} else {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", target, fmtDuration(m.Noop.Wall), yesNo(m.Noop.Wall <= multiNoop))
	}
	return b.String()
}

// helmCommands are helm's commands in the Helm scenario.
func helmCommands(wait bool) string {
	install := "`helm upgrade --install --repo --create-namespace --timeout 5m"
	if wait {
		install += " --wait"
	}
	return "`helm template --repo`; " + install + "`"
}

// helm renders the Helm scenario.
func (r *report) helm() string {
	h := r.Helm
	if h == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Helm charts\n\n")
	fmt.Fprintf(&b, "Charts generated for the run and served by a chart repository on 127.0.0.1 (helm's `--repo`, kustomize-deploy's HelmRepository; "+
		"both read its index.yaml on every run). helm is built from the Helm module kustomize-deploy links (hack/tools/helm). "+
		"Rendering: a chart of %d objects (%d each of Deployments, Services and ConfigMaps from a range over its values), "+
		"`kustomize-deploy build` of a unit holding its HelmRepository and HelmRelease against `helm template`; "+
		"%d runs of each with empty chart caches (each tool's emptied before each run) alternate, then %d warm runs of each; the medians of each are compared. "+
		"Example layout: an ingress-like chart, a cert-manager-like chart (a CRD in crds/, a resource of it, a post-install hook Job) and an app chart, "+
		"each into its own Namespace, both tools fetching them into empty caches; "+
		"helm installs them one after another (`helm upgrade --install`, waiting: %s), kustomize-deploy runs them as Flux's example lays them out: "+
		"a configuration (`apply --config`) of infra-controllers (the ingress and cert-manager-like releases) and apps (the app release), which depends on it, "+
		"waiting per Kustomization: %s. "+
		"The no-op: a configuration of %d units of one app release each, deployed once, then run %d times with nothing changed, its chart cache warm.\n\n",
		h.RenderObjects, helmBigCount, helmColdRuns, helmRenderRuns, yesNo(r.Wait), yesNo(r.Wait), helmNoopUnits, helmNoopRuns)
	b.WriteString("| run | helm | kustomize-deploy | ours/helm | ours peak RSS | ours API requests |\n|---|---:|---:|---:|---:|---|\n")
	row := func(what string, ours, peer measurement, hasPeer bool) {
		peerCell, q := "–", "–"
		if hasPeer {
			peerCell = cellOf(peer)
			if ours.Err == nil && peer.Err == nil && ours.Wall > 0 && peer.Wall > 0 {
				q = fmt.Sprintf("%.2f×", ratio(ours.Wall, peer.Wall))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", what, peerCell, cellOf(ours), q, rss(ours), requests(ours))
	}
	row(fmt.Sprintf("render %d objects, cold chart caches (median of %d)", h.RenderObjects, len(h.RenderColdOurs)), median(h.RenderColdOurs), median(h.RenderColdHelm), true)
	row(fmt.Sprintf("render %d objects, warm chart caches (median of %d)", h.RenderObjects, len(h.RenderOurs)), median(h.RenderOurs), median(h.RenderHelm), true)
	row(fmt.Sprintf("first deploy of the example layout (%d charts; helm: the sum of its %d installs)", len(layoutCharts), len(h.LayoutHelm)), h.LayoutOurs, h.LayoutHelmSum, true)
	row(fmt.Sprintf("%d HelmReleases in %d units, first deploy", helmNoopUnits, helmNoopUnits), h.NoopFirst, measurement{}, false)
	row(fmt.Sprintf("%d HelmReleases in %d units, no-op (median of %d)", helmNoopUnits, helmNoopUnits, len(h.Noop)), median(h.Noop), measurement{}, false)
	if len(h.RenderColdOurs) > 0 {
		fmt.Fprintf(&b, "\nCold renders, in order: kustomize-deploy %s; helm %s.\n", walls(h.RenderColdOurs), walls(h.RenderColdHelm))
	}
	if len(h.RenderOurs) > 0 {
		fmt.Fprintf(&b, "Warm renders, in order: kustomize-deploy %s; helm %s.\n", walls(h.RenderOurs), walls(h.RenderHelm))
	}
	if len(h.LayoutHelm) > 0 {
		parts := make([]string, len(h.LayoutHelm))
		for i, m := range h.LayoutHelm {
			parts[i] = layoutCharts[i] + " " + cellOf(m)
		}
		fmt.Fprintf(&b, "helm upgrade --install, one after another: %s.\n", strings.Join(parts, ", "))
	}
	if len(h.Noop) > 0 {
		fmt.Fprintf(&b, "No-op runs, in order: %s.\n", walls(h.Noop))
	}
	return b.String()
}

// walls lists the times of ms.
func walls(ms []measurement) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = cellOf(m)
	}
	return strings.Join(parts, ", ")
}

// helmTargets adds the Helm scenario's rows to the targets table.
func (r *report) helmTargets(b *strings.Builder) {
	notMeasured := func(target string) { fmt.Fprintf(b, "| %s | not measured | – |\n", target) }
	vs := func(target string, ours, peer measurement, limit float64) {
		if ours.Err != nil || peer.Err != nil || ours.Wall <= 0 || peer.Wall <= 0 {
			notMeasured(target)
			return
		}
		q := ratio(ours.Wall, peer.Wall)
		fmt.Fprintf(b, "| %s | %.2f× (%s vs %s) | %s |\n", target, q, fmtDuration(ours.Wall), fmtDuration(peer.Wall), yesNo(q <= limit))
	}
	h := r.Helm
	if h == nil {
		h = &helmResult{}
	}
	vs(fmt.Sprintf("rendering a chart of %d objects ≤ %.1f× helm template (warm caches, medians)", 3*helmBigCount, helmRenderLimit),
		median(h.RenderOurs), median(h.RenderHelm), helmRenderLimit)
	vs(fmt.Sprintf("rendering a chart of %d objects ≤ %.1f× helm template (cold caches, medians)", 3*helmBigCount, helmRenderLimit),
		median(h.RenderColdOurs), median(h.RenderColdHelm), helmRenderLimit)
	vs(fmt.Sprintf("first deploy of the example layout (%d charts) ≤ %.1f× helm upgrade --install one after another", len(layoutCharts), helmLayoutLimit),
		h.LayoutOurs, h.LayoutHelmSum, helmLayoutLimit)
	target := fmt.Sprintf("no-op of %d HelmReleases (`--config`, warm chart cache) ≤ %s", helmNoopUnits, fmtDuration(helmNoopLimit))
	if m := median(h.Noop); m.Err != nil || m.Wall <= 0 {
		notMeasured(target)
	} else {
		fmt.Fprintf(b, "| %s | %s (median of %s) | %s |\n", target, fmtDuration(m.Wall), walls(h.Noop), yesNo(m.Wall <= helmNoopLimit))
	}
}

// thousands writes n with a comma every three digits, as the report's
// prose does.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func levelList() string {
	parts := make([]string, len(multiLevels))
	for i, n := range multiLevels {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

func rss(m measurement) string {
	if m.MaxRSS == 0 {
		return "–"
	}
	return fmt.Sprintf("%d MB", m.MaxRSS>>20)
}

// targets checks the goals against the measurements; they are
// reported, never enforced.
func (r *report) targets() string {
	var b strings.Builder
	b.WriteString("\n## Targets\n\n| target | measured | met |\n|---|---|---|\n")
	row := func(target, measured string, met bool) {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", target, measured, yesNo(met))
	}
	vs := func(n int, scenario, peer string, limit float64, target string) {
		ours, ok := r.get(n, scenario, toolOurs)
		p, pok := r.get(n, scenario, peer)
		if !ok || !pok {
			fmt.Fprintf(&b, "| %s | not measured | – |\n", target)
			return
		}
		q := ratio(ours.Wall, p.Wall)
		row(target, fmt.Sprintf("%.2f× (%s vs %s)", q, fmtDuration(ours.Wall), fmtDuration(p.Wall)), q <= limit)
	}
	vs(1000, "first", toolKapp, firstLimit, "first deploy of 1,000 ≤ 0.5× kapp")
	if pairs := len(r.Repeats[1000]); pairs > 0 {
		const runs = 5
		target := fmt.Sprintf("first deploy of 1,000 ≤ 0.5× kapp in %d runs out of %d (--repeat-first)", runs, runs)
		k, ratios := r.repeatsUnder(1000)
		measured := fmt.Sprintf("%d of %d (%s)", k, pairs, strings.Join(ratios, ", "))
		if pairs < runs {
			// Fewer runs prove nothing either way unless one missed.
			if k < pairs {
				row(target, measured, false)
			} else {
				fmt.Fprintf(&b, "| %s | %s: too few runs | – |\n", target, measured)
			}
		} else {
			row(target, measured, k == pairs)
		}
		pl := r.Repeats[1000]
		if m, ok := medianOf(pl, firstPair.ratio); ok {
			row(fmt.Sprintf("first deploy of 1,000: median of the repeated pairs ≤ %.1f× kapp", firstMedian), fmt.Sprintf("%.2f×", m), m <= firstMedian && pairs >= runs)
		}
		if m, ok := medianOf(pl, firstPair.bareRatio); ok {
			row(fmt.Sprintf("first deploy of 1,000: median of the repeated runs ≤ %.1f× bare creates", bareLimit), fmt.Sprintf("%.2f×", m), m <= bareLimit && pairs >= runs)
		}
	}
	vs(1000, "noop", toolKapp, 0.3, "no-op re-run of 1,000 ≤ 0.3× kapp")
	vs(1000, "diff", toolKubectl, 0.3, "diff of 1,000 unchanged ≤ 0.3× kubectl diff")
	r.helmTargets(&b)
	r.homeTargets(&b)

	sizes := append([]int(nil), r.Sizes...)
	sort.Ints(sizes)
	if len(sizes) >= 2 {
		hi := sizes[len(sizes)-1]
		// The full span, then each step between sizes: the smallest size
		// fits in the client's request burst, so its per-object cost is
		// flattered and the full span alone overstates the growth.
		spans := [][2]int{{sizes[0], hi}}
		for i := 0; len(sizes) > 2 && i+1 < len(sizes); i++ {
			spans = append(spans, [2]int{sizes[i], sizes[i+1]})
		}
		for _, sp := range spans {
			r.growthRow(row, sp[0], sp[1], false)
		}
		// Waiting for readiness measures the cluster's rollouts (the
		// controller-manager's own client limits), not this tool.
		r.growthRow(row, sizes[0], hi, true)
		var peak int64
		for _, sc := range scenarios {
			if m, ok := r.Results[hi][sc.key][toolOurs]; ok && m.MaxRSS > peak {
				peak = m.MaxRSS
			}
		}
		if hi >= 5000 && peak > 0 {
			row(fmt.Sprintf("peak RSS < 150 MB at %d", hi), fmt.Sprintf("%d MB", peak>>20), peak < 150<<20)
		}
	}
	return b.String()
}

// growthRow reports kustomize-deploy's time per object at size hi over its
// time per object at lo, for every scenario: 1 is linear growth. With
// noWait, the time spent waiting for readiness is left out.
func (r *report) growthRow(row func(string, string, bool), lo, hi int, noWait bool) {
	var parts []string
	linear := true
	for _, sc := range scenarios {
		a, aok := r.get(lo, sc.key, toolOurs)
		z, zok := r.get(hi, sc.key, toolOurs)
		if !aok || !zok {
			continue
		}
		aw, zw := a.Wall, z.Wall
		if noWait {
			aw -= phaseDurations(a)["wait"]
			zw -= phaseDurations(z)["wait"]
		}
		perObject := ratio(zw, aw) / (float64(hi) / float64(lo))
		if perObject > 1.25 {
			linear = false
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", sc.key, perObject))
	}
	if len(parts) > 0 {
		what := "linear growth"
		if noWait {
			what += ", readiness wait left out,"
		}
		row(fmt.Sprintf("%s %d→%d (time per object at %d ÷ at %d; ≤ 1.25 counts as linear)", what, lo, hi, hi, lo),
			strings.Join(parts, ", "), linear)
	}
}

func requests(m measurement) string {
	if m.Requests == nil {
		return "–"
	}
	keys := make([]string, 0, len(m.Requests.ByMethod))
	for k := range m.Requests.ByMethod {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m.Requests.ByMethod[k])
	}
	return fmt.Sprintf("%d (%s)", m.Requests.Total, strings.Join(parts, ", "))
}

func ratio(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }

func fmtDuration(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func execOutput(ctx context.Context, bin string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	return string(out), err
}
