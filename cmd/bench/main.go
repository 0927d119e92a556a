// Command bench measures kustomize-deploy against kubectl apply
// --server-side and kapp deploy on the project's local control plane
// (internal/testcluster), for several object counts, and writes a markdown
// report. `make bench` runs it:
//
//	go run ./cmd/bench --bin bin/kustomize-deploy --out bench-results.md
//
// kubectl and kapp are built from the modules pinned in hack/tools and
// cached next to the control-plane binaries; nothing installed on the
// machine is used. Each tool deploys its own copy of the same manifests (a
// Namespace per tool and size) through six scenarios: first deploy, no-op
// re-run, one object changed, a tenth changed, a tenth pruned, and a diff
// with nothing changed. The suite's Namespace is deleted, untimed, before
// the next tool starts.
//
// --repeat-first N adds, at each size, N more pairs of first deploys (kapp,
// then kustomize-deploy, each into a fresh Namespace), for targets that
// ask for k runs out of N:
//
//	make bench BENCH_FLAGS="--sizes 1000 --repeat-first 5"
//
// The many-unit scenario (on by default; --multi=false skips it) deploys
// 20 units of 50 objects in a 3-level dependency graph (4, 8, 8 units):
// kapp one unit after another in dependency order, kustomize-deploy as a
// directory of Flux Kustomizations (apply --config) twice (first deploy,
// no-op), and kustomize-deploy with the same 1,000 objects as one unit.
//
// The Helm scenario (on by default; --helm=false skips it) measures the
// in-process Helm path against helm, built from the same Helm module
// (hack/tools/helm): rendering a chart of 300 objects against helm
// template, the first deploy of a 3-chart layout like
// flux2-kustomize-helm-example against helm upgrade --install of the
// charts one after another, and a no-op of 10 HelmReleases. Only the peers
// the chosen scenarios need are built; an empty --sizes with --multi=false
// and --homeops=false runs the Helm scenario alone:
//
//	go run ./cmd/bench --bin bin/kustomize-deploy --sizes '' --multi=false --homeops=false
//
// The home-ops scenario (on by default; --homeops=false skips it) writes
// a Git repository in the common home-ops layout: one root Kustomization
// whose build reaches 100 app Kustomizations (10 groups of 10, through
// kustomization.yaml resources), each with postBuild substitution and a
// component, 3,000 objects in all. kustomize-deploy runs it (apply
// --config, first deploy and no-op) and the same objects as one unit
// (apply --path, first deploy and no-op); see homeops.go.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is the command line.
type config struct {
	bin       string
	out       string
	workDir   string
	sizes     []int
	wait      bool
	timeout   time.Duration
	buildOnly bool
	// repeatFirst is how many extra pairs of first deploys (kapp, then
	// ours) run at each size.
	repeatFirst int
	// multi runs the many-unit scenario.
	multi bool
	// helm runs the Helm scenario.
	helm bool
	// homeOps runs the home-ops scenario.
	homeOps bool
	// render runs the whole-repository render scenario.
	render bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.bin, "bin", "bin/kustomize-deploy", "the kustomize-deploy binary to measure")
	fs.StringVar(&c.out, "out", "bench-results.md", "markdown report to write")
	fs.StringVar(&c.workDir, "work-dir", "", "directory for manifests and per-command logs (default: a new temporary directory, kept)")
	// 5000 is left out of the default: kustomize-deploy alone needs about
	// 25 minutes for its six scenarios at that size.
	sizes := fs.String("sizes", "100,1000,5000", "comma-separated object counts (the full matrix takes about 9 minutes on 2 cores, most of it kubectl's prune at 5,000); empty runs none of the six scenarios")
	fs.BoolVar(&c.wait, "wait", true, "let kustomize-deploy wait for readiness (its default; kapp waits by default, kubectl never does)")
	fs.DurationVar(&c.timeout, "command-timeout", 10*time.Minute, "limit for one command")
	fs.BoolVar(&c.buildOnly, "build-only", false, "build (or find cached) the peers the chosen scenarios need (kubectl, kapp, helm), print their paths and exit")
	fs.IntVar(&c.repeatFirst, "repeat-first", 0, "at each size, this many extra pairs of first deploys (kapp, then kustomize-deploy, each into a fresh namespace), for targets that ask for k runs out of N")
	fs.BoolVar(&c.multi, "multi", true, fmt.Sprintf("also run the many-unit scenario: %d units of %d objects in a 3-level dependency graph, kustomize-deploy --config against kapp unit by unit and against one unit of the same objects (about 2 minutes on 2 cores)", multiUnits, multiObjects))
	fs.BoolVar(&c.helm, "helm", true, "also run the Helm scenario: rendering a chart of a few hundred objects against helm template, a first deploy of 3 charts against helm upgrade --install one after another, and a no-op of 10 HelmReleases (about 2 minutes on 2 cores)")
	fs.BoolVar(&c.homeOps, "homeops", true, fmt.Sprintf("also run the home-ops scenario: a root Kustomization reaching %d app Kustomizations by building (%d groups of %d, %s objects, postBuild substitution and a component), kustomize-deploy --config first deploy and no-op against one unit of the same objects (about 3 minutes on 2 cores)",
		homeGroups*homeAppsPerGroup, homeGroups, homeAppsPerGroup, thousands(homeGroups*homeAppsPerGroup*homeObjectsPerApp)))
	fs.BoolVar(&c.render, "render", true, fmt.Sprintf("also run the whole-repository render scenario, no cluster: build --config and test --config of the home-ops layout with %d HelmReleases against kustomize build and helm template of the same units one after another (about 2 minutes on 2 cores)", renderReleases))
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	// The flag package prints its own errors; these it does not know.
	invalid := func(format string, args ...any) (config, error) {
		err := fmt.Errorf(format, args...)
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return c, err
	}
	if c.repeatFirst < 0 {
		return invalid("--repeat-first: %d is negative", c.repeatFirst)
	}
	if strings.TrimSpace(*sizes) == "" {
		return c, nil
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 10 {
			return invalid("--sizes: %q is not a count of at least 10", s)
		}
		c.sizes = append(c.sizes, n)
	}
	return c, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

func bench(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	started := time.Now()
	progress := func(format string, args ...any) {
		fmt.Fprintf(stderr, "bench [%6s] %s\n", time.Since(started).Round(time.Second), fmt.Sprintf(format, args...))
	}

	// Build only the peers the chosen scenarios measure: kapp alone takes
	// about 5 minutes to build cold.
	peers := len(cfg.sizes) > 0 || cfg.multi
	var kubectl, kapp, helm, kustomize string
	var err error
	if peers {
		progress("building or finding kubectl and kapp (hack/tools; cached after the first build)")
		if kubectl, err = testcluster.EnsureTool(ctx, "kubernetes", "k8s.io/kubernetes/cmd/kubectl", stderr); err != nil {
			return err
		}
		if kapp, err = testcluster.EnsureTool(ctx, "kapp", "carvel.dev/kapp/cmd/kapp", stderr); err != nil {
			return err
		}
	}
	if cfg.helm || cfg.render {
		progress("building or finding helm (hack/tools; cached after the first build)")
		if helm, err = testcluster.EnsureTool(ctx, "helm", "helm.sh/helm/v4/cmd/helm", stderr); err != nil {
			return err
		}
	}
	if cfg.render {
		progress("building or finding kustomize (hack/tools; cached after the first build)")
		if kustomize, err = testcluster.EnsureTool(ctx, "kustomize", "sigs.k8s.io/kustomize/kustomize/v5", stderr); err != nil {
			return err
		}
	}
	if cfg.buildOnly {
		for _, p := range []string{kubectl, kapp, helm, kustomize} {
			if p != "" {
				fmt.Fprintln(stdout, p)
			}
		}
		return nil
	}
	ours, err := filepath.Abs(cfg.bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(ours); err != nil {
		return fmt.Errorf("%s: build it first (make build): %w", cfg.bin, err)
	}
	work := cfg.workDir
	if work == "" {
		if work, err = os.MkdirTemp("", "kustomize-deploy-bench-"); err != nil {
			return err
		}
	}
	home := filepath.Join(work, "home")
	logs := filepath.Join(work, "logs")
	for _, d := range []string{home, logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}

	rep := &report{
		Started:  started,
		Sizes:    cfg.sizes,
		Tools:    []string{toolOurs},
		Versions: map[string]string{},
		Wait:     cfg.wait,
		Results:  map[int]map[string]map[string]measurement{},
	}
	// The render scenario needs no cluster: it runs before one starts, so
	// that the cluster's processes take none of its CPU.
	if cfg.render {
		bed := &testbed{home: home, logs: logs, work: work, timeout: cfg.timeout, progress: progress, rep: rep}
		rep.Versions[toolKustomize] = toolVersion(ctx, kustomize, "version")
		rep.Versions[toolHelm] = toolVersion(ctx, helm, "version", "--short")
		if err := (&renderRun{testbed: bed, ours: ours, kustomize: kustomize, helm: helm}).run(ctx); err != nil {
			return err
		}
	}
	if !peers && !cfg.homeOps && !cfg.helm {
		return finish(rep, cfg, work, stdout, progress)
	}

	progress("starting the local control plane")
	cluster, err := testcluster.Start(ctx, testcluster.Options{Log: stderr})
	if err != nil {
		return err
	}
	defer func() {
		progress("stopping the local control plane")
		cluster.Stop()
	}()
	client, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		return err
	}

	if peers {
		rep.Tools = []string{toolKubectl, toolKapp, toolOurs}
		rep.Versions[toolKubectl] = toolVersion(ctx, kubectl, "version", "--client")
		rep.Versions[toolKapp] = toolVersion(ctx, kapp, "version")
	}
	rep.Versions[toolOurs] = toolVersion(ctx, ours, "version")
	if cfg.helm {
		rep.Versions[toolHelm] = toolVersion(ctx, helm, "version", "--short")
	}
	tools := []tool{
		kubectlTool(kubectl, cluster.Kubeconfig),
		kappTool(kapp, cluster.Kubeconfig),
		oursTool(ours, cluster.Kubeconfig, cfg.wait),
	}

	bed := &testbed{home: home, logs: logs, work: work, timeout: cfg.timeout, client: client, config: cluster.Config, progress: progress, rep: rep}
	for _, n := range cfg.sizes {
		rep.Results[n] = map[string]map[string]measurement{}
		for _, t := range tools {
			s := &suite{testbed: bed, tool: t, n: n, dir: filepath.Join(work, fmt.Sprintf("%s-%d", t.name, n))}
			if err := s.run(ctx); err != nil {
				return err
			}
		}
		for i := 1; i <= cfg.repeatFirst; i++ {
			if err := bed.firstPair(ctx, tools[1], tools[2], n, i, cfg.repeatFirst); err != nil {
				return err
			}
		}
	}
	if cfg.multi {
		configTool, configArgs := oursConfigTool(ours, cluster.Kubeconfig)
		m := &multiRun{testbed: bed, kapp: tools[1], ours: tools[2], config: configTool, configArgs: configArgs, wait: cfg.wait}
		if err := m.run(ctx); err != nil {
			return err
		}
	}
	if cfg.homeOps {
		h := &homeRun{testbed: bed, ours: tools[2], kubeconfig: cluster.Kubeconfig, wait: cfg.wait}
		if err := h.run(ctx); err != nil {
			return err
		}
	}
	if cfg.helm {
		dyn, err := dynamic.NewForConfig(cluster.Config)
		if err != nil {
			return err
		}
		h := &helmRun{testbed: bed, helmBin: helm, ours: ours, kubeconfig: cluster.Kubeconfig, wait: cfg.wait, dyn: dyn}
		if err := h.run(ctx); err != nil {
			return err
		}
	}
	return finish(rep, cfg, work, stdout, progress)
}

// finish writes the report.
func finish(rep *report, cfg config, work string, stdout io.Writer, progress func(string, ...any)) error {
	rep.Finished = time.Now()
	md := rep.Markdown()
	fmt.Fprint(stdout, md)
	if err := os.WriteFile(cfg.out, []byte(md), 0o644); err != nil {
		return err
	}
	progress("wrote %s; manifests and per-command logs are in %s", cfg.out, work)
	return nil
}

// testbed is what every scenario shares: the cluster, where tools keep
// their state and logs, the limit for one command, and the report.
type testbed struct {
	home, logs, work string
	timeout          time.Duration
	client           kubernetes.Interface
	config           *rest.Config
	progress         func(string, ...any)
	rep              *report
}

// suite is one tool at one size.
type suite struct {
	*testbed
	tool tool
	n    int
	dir  string
}

// scenarios in the order they run; each starts from the state the one
// before it left.
var scenarios = []struct {
	key, title string
}{
	{"first", "first deploy"},
	{"noop", "no-op re-run"},
	{"one", "one object changed"},
	{"tenth", "10% changed"},
	{"prune", "prune 10%"},
	{"diff", "diff, nothing changed"},
}

func (s *suite) run(ctx context.Context) error {
	name := fmt.Sprintf("bench-%s-%d", shortName(s.tool.name), s.n)
	w := newWorkload(name, s.n)
	if s.tool.needsNamespace {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{suiteLabel: name}}}
		if _, err := s.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace %s for %s: %w", name, s.tool.name, err)
		}
	}
	for _, sc := range scenarios {
		what := ""
		switch sc.key {
		case "one":
			w.ChangeOne()
			what = " (1 ConfigMap)"
		case "tenth":
			what = fmt.Sprintf(" (%d objects, every Deployment among them)", w.ChangeTenth())
		case "prune":
			what = fmt.Sprintf(" (%d ConfigMaps removed)", w.PruneTenth())
		}
		if err := w.Write(s.dir); err != nil {
			return err
		}
		args, ok := s.tool.apply(name, s.dir), func(code int) bool { return code == 0 }
		if sc.key == "diff" {
			args, ok = s.tool.diff(name, s.dir), s.tool.diffOK
		}
		logPath := filepath.Join(s.logs, fmt.Sprintf("%s-%d-%s.log", s.tool.name, s.n, sc.key))
		m := measure(ctx, s.tool, args, ok, s.home, logPath, s.timeout)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.rep.add(s.n, sc.key, s.tool.name, m)
		line := fmt.Sprintf("N=%d %-16s %-22s %8s  peak RSS %4d MB", s.n, s.tool.name, sc.title, fmtDuration(m.Wall), m.MaxRSS>>20)
		if m.Requests != nil {
			line += fmt.Sprintf("  %d API requests", m.Requests.Total)
		}
		s.progress("%s%s", line, what)
		if m.Err != nil {
			s.progress("  FAILED: %v", m.Err)
			s.rep.note("N=%d %s %s failed: %v", s.n, s.tool.name, sc.title, m.Err)
			continue
		}
		if sc.key != "diff" {
			if err := s.checkConfigMaps(ctx, name, w.ConfigMaps); err != nil {
				s.progress("  CHECK FAILED: %v", err)
				s.rep.note("N=%d %s %s: %v", s.n, s.tool.name, sc.title, err)
			}
		}
	}
	s.progress("N=%d %s: deleting namespace %s (untimed)", s.n, s.tool.name, name)
	return s.deleteNamespaces(ctx, name)
}

// checkConfigMaps counts the ConfigMaps labelled as ns's suite in
// namespace ns, so a tool that silently did less (did not prune, say) does
// not look fast.
func (b *testbed) checkConfigMaps(ctx context.Context, ns string, want int) error {
	list, err := b.client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: suiteLabel + "=" + ns})
	if err != nil {
		return err
	}
	if len(list.Items) != want {
		return fmt.Errorf("%d ConfigMaps in %s, want %d", len(list.Items), ns, want)
	}
	return nil
}

// deleteNamespaces removes the namespaces with their objects and waits
// until they are gone, so the next suite does not share the API server
// with a namespace deletion. All are deleted before the wait: the
// namespace controller empties them side by side.
func (b *testbed) deleteNamespaces(ctx context.Context, names ...string) error {
	var pending []string
	for _, ns := range names {
		err := b.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("deleting namespace %s: %w", ns, err)
		default:
			pending = append(pending, ns)
		}
	}
	for _, ns := range pending {
		err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := b.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			return fmt.Errorf("namespace %s was not deleted: %w", ns, err)
		}
	}
	return nil
}

func shortName(tool string) string {
	if tool == toolOurs {
		return "kd"
	}
	return tool
}

// toolVersion is the first line a tool prints about its version.
func toolVersion(ctx context.Context, bin string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := execOutput(ctx, bin, args...)
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return line
}
