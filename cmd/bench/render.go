package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
)

// The render scenario (--render) measures the whole-repository render
// without a cluster (issue 34): `build --config --output-dir` and `test
// --config` of the home-ops layout (100 app Kustomizations and the root)
// in which renderReleases apps also hold a HelmRelease of an in-repository
// chart, against its peer: `kustomize build` of every unit's directory and
// `helm template` of every release, one after another (what a CI job
// without kustomize-deploy runs; flate, the closest peer, does not build
// here). Every command is checked: a run that rendered less does not look
// fast.
const (
	toolKustomize  = "kustomize"
	renderReleases = 20
	// renderChartDir is where the releases' chart is in the repository.
	renderChartDir = "charts/app"
	// renderTarget is the most build --config may take, as a multiple of
	// the peer's time.
	renderTarget = 1.0
)

// renderLayout is the home-ops layout with HelmReleases.
type renderLayout struct {
	homeLayout
	Releases int
}

func newRenderLayout() renderLayout {
	return renderLayout{homeLayout: newHomeLayout("kdr"), Releases: renderReleases}
}

// releaseApps are the apps, by group and index, that hold a HelmRelease:
// the last ones of each group, spread evenly.
func (l renderLayout) releaseApps() [][2]int {
	var out [][2]int
	for i := range l.Releases {
		g := i % l.Groups
		a := l.AppsPerGroup - 1 - (i/l.Groups)%l.AppsPerGroup
		out = append(out, [2]int{g, a})
	}
	return out
}

// releaseName is the HelmRelease of app a of group g.
func (l renderLayout) releaseName(g, a int) string { return l.App(g, a) + "-web" }

// Write replaces root with a Git repository of the layout and returns
// the configuration's directory and the peer's commands, each an argument
// list for kustomize (build DIR) or helm (template ...), run from root.
func (l renderLayout) Write(ctx context.Context, root string) (string, []peerCommand, error) {
	config, err := l.homeLayout.Write(ctx, root, false)
	if err != nil {
		return "", nil, err
	}
	if err := helmtest.WriteBenchCharts(filepath.Join(root, filepath.Dir(renderChartDir))); err != nil {
		return "", nil, err
	}
	for name := range helmtest.BenchCharts() {
		if name != helmtest.BenchChartApp {
			if err := os.RemoveAll(filepath.Join(root, filepath.Dir(renderChartDir), name)); err != nil {
				return "", nil, err
			}
		}
	}
	cmds := []peerCommand{{tool: "kustomize", args: []string{"build", "kubernetes/apps"}}}
	releases := map[[2]int]bool{}
	for _, ga := range l.releaseApps() {
		releases[ga] = true
	}
	for g := range l.Groups {
		for a := range l.AppsPerGroup {
			dir := filepath.Join("kubernetes/apps", l.Namespace(g), l.App(g, a), "app")
			cmds = append(cmds, peerCommand{tool: "kustomize", args: []string{"build", dir}})
			if !releases[[2]int{g, a}] {
				continue
			}
			files := map[string]string{
				filepath.Join(dir, "kustomization.yaml"): "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ./objects.yaml\n- ./release.yaml\n",
				filepath.Join(dir, "release.yaml"):       l.release(g, a),
			}
			for p, body := range files {
				if err := os.WriteFile(filepath.Join(root, p), []byte(body), 0o644); err != nil {
					return "", nil, err
				}
			}
			cmds = append(cmds, peerCommand{tool: "helm", args: []string{"template", l.releaseName(g, a), "./" + renderChartDir,
				"--namespace", l.Namespace(g), "--set", "image.tag=" + l.imageTag(g, a)}})
		}
	}
	if err := gitCommit(ctx, root); err != nil {
		return "", nil, err
	}
	return config, cmds, nil
}

// imageTag is the tag each release sets, so that every release renders
// its own objects.
func (l renderLayout) imageTag(g, a int) string { return fmt.Sprintf("1.%d.%d", g, a) }

// release is the HelmRelease of app a of group g: the in-repository
// chart, from the configuration's GitRepository.
func (l renderLayout) release(g, a int) string {
	return fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: %s
spec:
  interval: 1h
  chart:
    spec:
      chart: ./%s
      sourceRef:
        kind: GitRepository
        name: flux-system
        namespace: flux-system
  values:
    image:
      tag: %q
`, l.releaseName(g, a), renderChartDir, l.imageTag(g, a))
}

// peerCommand is one command of the peer's render.
type peerCommand struct {
	tool string // kustomize or helm
	args []string
}

// renderResult is the render scenario.
type renderResult struct {
	Units, Releases int
	// Build is build --config --output-dir; Test is test --config.
	Build, Test measurement
	// Peer is the sum of the peer's commands (wall, CPU, the largest
	// peak RSS); PeerCommands how many ran.
	Peer         measurement
	PeerCommands int
	// Profile is a CPU profile of a further build --config (not timed
	// here), for `go tool pprof`.
	Profile string
}

// renderRun runs the render scenario.
type renderRun struct {
	*testbed
	ours, kustomize, helm string
}

func (r *renderRun) run(ctx context.Context) error {
	l := newRenderLayout()
	res := &renderResult{Units: l.Apps() + 1, Releases: l.Releases}
	r.rep.Render = res
	root := filepath.Join(r.work, "render-repo")
	config, cmds, err := l.Write(ctx, root)
	if err != nil {
		return err
	}
	res.PeerCommands = len(cmds)
	fail := func(m *measurement, title string, err error) {
		r.progress("  FAILED: %v", err)
		r.rep.note("render: %s: %v", title, err)
		if m.Err == nil {
			m.Err = err
		}
	}

	r.progress("render: the peer, %d commands one after another (kustomize build, helm template)", len(cmds))
	res.Peer = r.peer(ctx, root, cmds)
	r.progress("render: peer %s  CPU %s", fmtDuration(res.Peer.Wall), fmtDuration(res.Peer.CPU))
	if res.Peer.Err != nil {
		fail(&res.Peer, "peer", res.Peer.Err)
	}

	ours := tool{name: toolOurs, bin: r.ours, keepStdout: true}
	out := filepath.Join(r.work, "render-snapshot")
	_ = os.RemoveAll(out)
	res.Build = measure(ctx, ours, []string{"build", "--config", config, "--output-dir", out}, exitZero, r.home, filepath.Join(r.logs, "render-build.log"), r.timeout)
	r.progress("render: build --config --output-dir %s  CPU %s  peak RSS %d MB", fmtDuration(res.Build.Wall), fmtDuration(res.Build.CPU), res.Build.MaxRSS>>20)
	if res.Build.Err != nil {
		fail(&res.Build, "build --config", res.Build.Err)
	} else if err := checkSnapshot(out, l); err != nil {
		fail(&res.Build, "build --config", err)
	}

	res.Test = measure(ctx, ours, []string{"test", "--config", config}, exitZero, r.home, filepath.Join(r.logs, "render-test.log"), r.timeout)
	r.progress("render: test --config %s  CPU %s  peak RSS %d MB", fmtDuration(res.Test.Wall), fmtDuration(res.Test.CPU), res.Test.MaxRSS>>20)
	if res.Test.Err != nil {
		fail(&res.Test, "test --config", res.Test.Err)
	} else if want := fmt.Sprintf("%d of %d unit(s) passed", res.Units, res.Units); !bytes.Contains(res.Test.Stdout, []byte(want)) {
		fail(&res.Test, "test --config", fmt.Errorf("its output lacks %q", want))
	}

	profile := filepath.Join(r.logs, "render-build.cpu.pprof")
	prof := ours
	prof.env = []string{"KUSTOMIZE_DEPLOY_CPUPROFILE=" + profile}
	if m := measure(ctx, prof, []string{"build", "--config", config, "--output-dir", out}, exitZero, r.home, filepath.Join(r.logs, "render-build-profile.log"), r.timeout); m.Err == nil {
		res.Profile = profile
	}
	return ctx.Err()
}

// peer runs cmds one after another from root, each checked to exit 0
// and print objects, and sums their times.
func (r *renderRun) peer(ctx context.Context, root string, cmds []peerCommand) measurement {
	var total measurement
	logFile, err := os.Create(filepath.Join(r.logs, "render-peer.log"))
	if err != nil {
		return measurement{Err: err}
	}
	defer logFile.Close()
	for _, c := range cmds {
		bin := r.kustomize
		if c.tool == "helm" {
			bin = r.helm
		}
		cctx, cancel := context.WithTimeout(ctx, r.timeout)
		cmd := exec.CommandContext(cctx, bin, c.args...)
		cmd.Dir = root
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.home, "LANG=C"}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		total.Wall += time.Since(start)
		cancel()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && cmd.ProcessState != nil {
			total.CPU += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			total.MaxRSS = max(total.MaxRSS, ru.Maxrss*1024)
		}
		fmt.Fprintf(logFile, "$ %s %s\n%s", c.tool, strings.Join(c.args, " "), stderr.String())
		switch {
		case err != nil:
			return measurement{Err: fmt.Errorf("%s %s: %v: %s", c.tool, strings.Join(c.args, " "), err, stderr.String())}
		case !bytes.Contains(stdout.Bytes(), []byte("kind: ")):
			return measurement{Err: fmt.Errorf("%s %s printed no objects", c.tool, strings.Join(c.args, " "))}
		}
	}
	return total
}

// checkSnapshot checks that build --config wrote a file per unit, each
// release's objects in its app's, and their digests.
func checkSnapshot(dir string, l renderLayout) error {
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		return err
	}
	if n := strings.Count(string(sums), "\n"); n != l.Apps()+1 {
		return fmt.Errorf("SHA256SUMS lists %d files, want %d", n, l.Apps()+1)
	}
	var errs []error
	for _, ga := range l.releaseApps() {
		g, a := ga[0], ga[1]
		data, err := os.ReadFile(filepath.Join(dir, l.App(g, a)+".yaml"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !bytes.Contains(data, []byte("registry.example/bench/app:"+l.imageTag(g, a))) {
			errs = append(errs, fmt.Errorf("%s.yaml lacks release %s's Deployment", l.App(g, a), l.releaseName(g, a)))
		}
	}
	return errors.Join(errs...)
}

// render is the render scenario's section of the report.
func (r *report) render() string {
	res := r.Render
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Whole-repository render, no cluster (%d units, %d HelmReleases)\n\n", res.Units, res.Releases)
	fmt.Fprintf(&b, "The home-ops layout (%d app Kustomizations found by building the root, postBuild substitution, a component), "+
		"%d of whose apps also hold a HelmRelease of an in-repository chart. The peer is `kustomize build` of every unit's directory "+
		"and `helm template` of every release, %d commands run one after another (flate does not build here).\n\n",
		res.Units-1, res.Releases, res.PeerCommands)
	b.WriteString("| command | wall | CPU | peak RSS | ours/peer |\n|---|---:|---:|---:|---:|\n")
	row := func(name string, m measurement) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |", name, cellOf(m), cpu(m), rss(m))
		if m.Err == nil && res.Peer.Err == nil && res.Peer.Wall > 0 && name != "peer" {
			fmt.Fprintf(&b, " %.2f× |\n", ratio(m.Wall, res.Peer.Wall))
		} else {
			b.WriteString(" – |\n")
		}
	}
	row("peer", res.Peer)
	row("`build --config --output-dir`", res.Build)
	row("`test --config`", res.Test)
	if res.Profile != "" {
		fmt.Fprintf(&b, "\nCPU profile of a further `build --config`: `go tool pprof -top %s`.\n", res.Profile)
	}
	ok := res.Build.Err == nil && res.Peer.Err == nil && res.Peer.Wall > 0 && ratio(res.Build.Wall, res.Peer.Wall) <= renderTarget
	fmt.Fprintf(&b, "\nTarget: `build --config` ≤ %.1f× the peer: %s.\n", renderTarget, yesNo(ok))
	return b.String()
}
