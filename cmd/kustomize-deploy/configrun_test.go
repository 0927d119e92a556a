package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// fluxRepo copies testdata/flux-repo into a git repository of its own,
// with NAMESPACE replaced by ns, and returns its path.
func fluxRepo(t *testing.T, ns string) string {
	t.Helper()
	return gitFixture(t, "flux-repo", "NAMESPACE", ns)
}

// gitFixture copies testdata/name into a git repository of its own, with
// each placeholder of oldnew (old, new pairs) replaced, and returns its
// path.
func gitFixture(t *testing.T, name string, oldnew ...string) string {
	t.Helper()
	dir := fixture(t, name)
	replacer := strings.NewReplacer(oldnew...)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, []byte(replacer.Replace(string(data))), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "fleet"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// runConfig runs a --config command with --output json and decodes it.
func (c *cli) runConfig(args ...string) (outcome, *result.Set) {
	c.t.Helper()
	o := c.run(append(args, "--output", "json")...)
	return o, decodeSet(c.t, o)
}

func unitsByName(s *result.Set) map[string]*result.Result {
	m := map[string]*result.Result{}
	for _, r := range s.Units {
		m[r.Unit] = r
	}
	return m
}

// A Flux repository runs as one step: Flux's own sync first (it applies
// the directory's other objects), then the seed chain in order, health
// checks waited for, substituteFrom from the repository, patches, images,
// files beside a kustomization's directory.
func TestConfigRunsAFluxRepository(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, c.ns)
	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/local"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	for _, name := range []string{"flux-system", "istio", "webapp-common", "webapp-backend", "webapp-frontend", "monitoring"} {
		if r := got[name]; r == nil || r.Reason != result.ReasonApplySucceed {
			t.Errorf("unit %s: %+v", name, r)
		}
	}
	for _, name := range []string{"istio", "webapp-common", "monitoring"} {
		if r := got[name]; r != nil && r.StartedAt.Before(got["flux-system"].StartedAt) {
			t.Errorf("%s started before Flux's own sync, which applies its directory", name)
		}
	}
	k := cluster.Client(t)
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "cluster-vars", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap beside the Kustomizations was not applied by Flux's own sync: %v", err)
	}
	d, err := k.AppsV1().Deployments(c.ns).Get(t.Context(), "common", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Annotations["cluster"] != "local" || d.Annotations["region"] != "eu-west-1" {
		t.Errorf("substituteFrom the repository's ConfigMap: %v", d.Annotations)
	}
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "common-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("../shared/labels.yaml (beside the kustomization) was not applied: %v", err)
	}
	b, _ := k.AppsV1().Deployments(c.ns).Get(t.Context(), "backend", metav1.GetOptions{})
	if img := b.Spec.Template.Spec.Containers[0].Image; img != "registry.example/backend:2.0" {
		t.Errorf("spec.images: %s", img)
	}
	f, _ := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "frontend", metav1.GetOptions{})
	if f.Data["patched"] != "by-flux-patch" {
		t.Errorf("spec.patches: %v", f.Data)
	}
	inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, "webapp-frontend")
	if inv == nil || inv.Status.Config == "" || inv.Status.DeletionPolicy != "Delete" {
		t.Errorf("the inventory does not record its configuration: %+v", inv)
	}
	// A second run reuses every unit: nothing to do.
	o, s = c.runConfig("apply", "--config", filepath.Join(repo, "clusters/local"))
	for _, r := range s.Units {
		if r.Changed() || !r.Ready {
			t.Errorf("second run: %s changed or not ready: %s %s", r.Unit, r.Reason, r.Message)
		}
	}
}

// A failure in the middle of the chain skips only its dependents; the
// unrelated unit goes on; the exit code says something failed. Units that
// applied nothing get no inventory.
func TestConfigFailureSkipsOnlyDependents(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, c.ns)
	// webapp-common's pods never become ready.
	deployment := filepath.Join(repo, "apps/common/deployment.yaml")
	data, _ := os.ReadFile(deployment)
	writeFile(t, deployment, strings.Replace(string(data), "labels: {app: common}", "labels: {app: common, testcluster.kustomize-deploy.dev/readiness: fail}", 1))
	apps := filepath.Join(repo, "clusters/local/apps.yaml")
	data, _ = os.ReadFile(apps) // webapp-common's health check gives up sooner
	writeFile(t, apps, strings.Replace(string(data), "  timeout: 1m\n  healthChecks:", "  timeout: 5s\n  healthChecks:", 1))
	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/local"), "--name", "flux-system,istio,webapp-common,webapp-backend,webapp-frontend,monitoring")
	if o.code != exitFail || s.Ready {
		t.Fatalf("exit %d ready %v", o.code, s.Ready)
	}
	got := unitsByName(s)
	want := map[string]result.Reason{
		"istio": result.ReasonApplySucceed, "monitoring": result.ReasonApplySucceed,
		"webapp-common":  result.ReasonHealthCheckFailed,
		"webapp-backend": result.ReasonDependencyNotReady, "webapp-frontend": result.ReasonDependencyNotReady,
	}
	for name, reason := range want {
		if got[name] == nil || got[name].Reason != reason {
			t.Errorf("%s: %+v, want %s", name, got[name], reason)
		}
	}
	contains(t, "why backend was skipped", got["webapp-backend"].Message, "dependency webapp-common of this run is not ready")
	if _, err := cluster.Client(t).AppsV1().Deployments(c.ns).Get(t.Context(), "backend", metav1.GetOptions{}); err == nil {
		t.Error("a dependent of a failed unit was applied")
	}
	// The skipped units never applied anything: no inventory for them
	// (a failed first run of many units would leave a Secret each).
	for _, unit := range []string{"webapp-backend", "webapp-frontend"} {
		if inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, unit); inv != nil || err != nil {
			t.Errorf("%s, skipped, has an inventory: %+v %v", unit, inv, err)
		}
	}
	if inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, "webapp-common"); inv == nil || inv.Status.Ready.Reason != result.ReasonHealthCheckFailed {
		t.Errorf("the unit that applied and failed does not say why: %+v", inv)
	}
}

// A cycle or a dependency on a unit that is nowhere is an error naming
// where each unit is defined, before anything is written.
func TestConfigGraphErrorsWriteNothing(t *testing.T) {
	for _, tc := range []struct {
		name, edit, want string
	}{
		{name: "cycle", edit: "  dependsOn:\n  - name: webapp-frontend\n  interval: 10m\n", want: "dependency cycle: webapp-common (clusters/local/apps.yaml:1, emitted by flux-system/flux-system) → istio (clusters/local/infrastructure.yaml:1, emitted by flux-system/flux-system) → webapp-frontend (clusters/local/apps.yaml:51, emitted by flux-system/flux-system) → webapp-backend (clusters/local/apps.yaml:28, emitted by flux-system/flux-system) → webapp-common"},
		{name: "missing", edit: "  dependsOn:\n  - name: cert-manager\n  interval: 10m\n", want: "unit istio (clusters/local/infrastructure.yaml:1, emitted by flux-system/flux-system) depends on cert-manager, which is neither in this run nor deployed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			repo := fluxRepo(t, c.ns)
			infra := filepath.Join(repo, "clusters/local/infrastructure.yaml")
			data, _ := os.ReadFile(infra)
			writeFile(t, infra, strings.Replace(string(data), "  interval: 10m\n", tc.edit, 1))
			o := c.run("apply", "--config", filepath.Join(repo, "clusters/local"))
			if o.code != exitFail || !strings.Contains(o.stderr, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant %q", o.code, o.stderr, tc.want)
			}
			if invs, _ := inventory.List(t.Context(), runtimeClient(t), c.ns); len(invs) != 0 {
				t.Errorf("%d inventories written", len(invs))
			}
		})
	}
}

// A unit removed from the configuration is garbage-collected on apply; a
// suspended one loses its inventory but keeps its objects, as in Flux.
func TestConfigCollectsRemovedUnits(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, c.ns)
	cfg := filepath.Join(repo, "clusters/local")
	if o, s := c.runConfig("apply", "--config", cfg); !s.Ready {
		t.Fatalf("%s\n%s", o.stdout, o.stderr)
	}
	if o := c.run("suspend", "--name", "monitoring"); o.code != exitOK {
		t.Fatal(o.stderr)
	}
	apps := filepath.Join(cfg, "apps.yaml")
	data, _ := os.ReadFile(apps)
	docs := strings.Split(string(data), "---\n")
	var kept []string
	for _, d := range docs { // drop webapp-frontend and monitoring
		if !strings.Contains(d, "name: webapp-frontend\n  namespace") && !strings.Contains(d, "name: monitoring\n  namespace") {
			kept = append(kept, d)
		}
	}
	writeFile(t, apps, strings.Join(kept, "---\n"))
	o, s := c.runConfig("apply", "--config", cfg)
	if o.code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	if r := got["webapp-frontend"]; r == nil || r.Mode != result.ModeDelete || r.Reason != result.ReasonDeleteSucceed {
		t.Errorf("webapp-frontend was not collected: %+v", r)
	}
	if r := got["monitoring"]; r == nil || !strings.Contains(r.Message, "while suspended") {
		t.Errorf("monitoring: %+v", r)
	}
	k := cluster.Client(t)
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "frontend", metav1.GetOptions{}); err == nil {
		t.Error("the removed unit's objects are still there")
	}
	if _, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "monitoring", metav1.GetOptions{}); err != nil {
		t.Errorf("the suspended unit's objects were deleted: %v", err)
	}
	for _, unit := range []string{"webapp-frontend", "monitoring"} {
		if inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, unit); inv != nil {
			t.Errorf("%s still has an inventory", unit)
		}
	}
}

// One configuration, two clusters: a unit whose kubeConfig names a Secret
// runs on the cluster given for it, after its dependency on the default
// cluster; inventories are on each unit's own cluster.
func TestConfigTwoClusters(t *testing.T) {
	c := newCLI(t)
	second, err := testcluster.Start(t.Context(), testcluster.Options{Nodes: 1})
	if err != nil {
		t.Fatalf("a second cluster did not start: %v", err)
	}
	t.Cleanup(second.Stop)
	repo := fluxRepo(t, c.ns)
	// monitoring goes to the second cluster, after istio on the first; its
	// namespace must exist there.
	k2, err := kubernetes.NewForConfig(second.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k2.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	apps := filepath.Join(repo, "clusters/local/apps.yaml")
	data, _ := os.ReadFile(apps)
	writeFile(t, apps, strings.Replace(string(data), "  path: ./monitoring\n", "  path: ./monitoring\n  dependsOn:\n  - name: istio\n  kubeConfig:\n    secretRef:\n      name: staging\n", 1))

	cfg := filepath.Join(repo, "clusters/local")
	if o := c.run("apply", "--config", cfg); o.code != exitFail || !strings.Contains(o.stderr, "--kubeconfig-secret staging=FILE") {
		t.Errorf("without the kubeconfig: exit %d\n%s", o.code, o.stderr)
	}
	o, s := c.runConfig("apply", "--config", cfg, "--kubeconfig-secret", "staging="+second.Kubeconfig)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if _, err := k2.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "monitoring", metav1.GetOptions{}); err != nil {
		t.Errorf("monitoring is not on the second cluster: %v", err)
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "monitoring", metav1.GetOptions{}); err == nil {
		t.Error("monitoring landed on the first cluster too")
	}
	c2, err := kube.New(second.Config, "default", kube.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if inv, _ := inventory.Load(t.Context(), c2.Client, c.ns, "monitoring"); inv == nil {
		t.Error("monitoring's inventory is not on its cluster")
	}

	// plan: one job per cluster, or per connected group.
	p := c.runAsIs("plan", "--config", cfg, "--by", "cluster", "-o", "json")
	contains(t, "plan by cluster", p.stdout, `{"name":"default","units":"flux-system,webapp-common,webapp-backend,webapp-frontend,istio"}`, `{"name":"staging","units":"monitoring","cluster":"staging"}`)
	p = c.runAsIs("plan", "--config", cfg)
	contains(t, "plan by group", p.stdout, "GROUP", "flux-system,webapp-common,webapp-backend,webapp-frontend,monitoring,istio")
	// A directory of clusters, one configuration each.
	p = c.runAsIs("plan", "--config", filepath.Dir(cfg), "--by", "config", "-o", "json")
	contains(t, "plan by config", p.stdout, `{"name":"local","units":"flux-system,webapp-common,webapp-backend,webapp-frontend,monitoring,istio","config":"clusters/local"}`)
}

// plan checks what apply would: a configuration of no unit is refused
// (not a matrix of no job, {"include":null}), and so is a unit whose
// spec.path is not a directory of the repository.
func TestPlanRefusesWhatApplyWould(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, c.ns)
	cfg := filepath.Join(repo, "clusters/local")
	p := c.runAsIs("plan", "--config", filepath.Join(repo, "apps"), "-o", "json")
	if p.code != exitFail || strings.Contains(p.stdout, "include") {
		t.Errorf("a configuration of no unit: exit %d\n%s", p.code, p.stdout)
	}
	contains(t, "plan of no unit", p.stderr, "configuration apps holds no Flux Kustomization to run: refused")

	infra := filepath.Join(cfg, "infrastructure.yaml")
	data, _ := os.ReadFile(infra)
	writeFile(t, infra, strings.Replace(string(data), "path: ./infrastructure/istio", "path: ./infrastructure/istoi", 1))
	for _, args := range [][]string{{"--config", cfg}, {"--config", filepath.Dir(cfg), "--by", "config"}} {
		p = c.runAsIs(append([]string{"plan", "-o", "json"}, args...)...)
		if p.code != exitFail || strings.Contains(p.stdout, "include") {
			t.Errorf("plan %q with a missing path: exit %d\n%s", args, p.code, p.stdout)
		}
		contains(t, "plan with a missing path", p.stderr, "unit istio (clusters/local/infrastructure.yaml:1): spec.path")
	}
}

// Units that leave the configuration are listed by a diff before the
// apply collects them, and their collection counts against the prune
// budget: more units than --max-collect, or objects over --max-prune or of
// a --protect kind, all together, is refused (nothing of them deleted)
// unless --force-prune.
func TestConfigCollectionBudget(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, c.ns)
	cfg := filepath.Join(repo, "clusters/local")
	if o, s := c.runConfig("apply", "--config", cfg); !s.Ready {
		t.Fatalf("%s\n%s", o.stdout, o.stderr)
	}
	apps := filepath.Join(cfg, "apps.yaml")
	data, _ := os.ReadFile(apps)
	var kept []string
	for _, d := range strings.Split(string(data), "---\n") { // drop webapp-frontend and monitoring
		if !strings.Contains(d, "name: webapp-frontend\n  namespace") && !strings.Contains(d, "name: monitoring\n  namespace") {
			kept = append(kept, d)
		}
	}
	writeFile(t, apps, strings.Join(kept, "---\n"))
	stays := func(when string) {
		t.Helper()
		for _, name := range []string{"frontend", "monitoring"} {
			if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
				t.Errorf("%s: ConfigMap %s: %v", when, name, err)
			}
		}
		for _, unit := range []string{"webapp-frontend", "monitoring"} {
			if inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, unit); inv == nil {
				t.Errorf("%s: %s lost its inventory", when, unit)
			}
		}
	}

	// The diff lists both, with the objects the apply deletes.
	o, s := c.runConfig("diff", "--config", cfg)
	got := unitsByName(s)
	if r := got["webapp-frontend"]; o.code != exitOK || r == nil || r.Reason != result.ReasonDiffSucceed || r.Counts.Deleted != 1 || !strings.Contains(r.Message, "left the configuration (deletionPolicy Delete)") {
		t.Errorf("diff: exit %d, webapp-frontend %+v\n%s", o.code, r, o.stderr)
	}
	if r := got["monitoring"]; r == nil || r.Counts.Deleted != 1 {
		t.Errorf("diff: monitoring %+v", r)
	}

	// Over the budget, the diff fails as the apply will, and the apply
	// collects nothing.
	for _, budget := range [][]string{{"--max-collect", "1"}, {"--max-prune", "1"}, {"--protect", "ConfigMap"}} {
		o, s = c.runConfig(append([]string{"diff", "--config", cfg}, budget...)...)
		if r := unitsByName(s)["monitoring"]; o.code != exitFail || r == nil || r.Reason != result.ReasonPruneFailed || !strings.Contains(r.Message, "refusing to garbage-collect 2 unit(s) that left the configuration (monitoring, webapp-frontend)") {
			t.Errorf("diff %q: exit %d, monitoring %+v", budget, o.code, r)
		}
		o, s = c.runConfig(append([]string{"apply", "--config", cfg}, budget...)...)
		if r := unitsByName(s)["webapp-frontend"]; o.code != exitFail || r == nil || r.Reason != result.ReasonPruneFailed || r.Counts.Skipped != 1 {
			t.Errorf("apply %q: exit %d, webapp-frontend %+v", budget, o.code, r)
		}
		if r := unitsByName(s)["webapp-backend"]; r == nil || r.Reason != result.ReasonApplySucceed {
			t.Errorf("apply %q: the units still in the configuration were not applied: %+v", budget, r)
		}
		contains(t, "the hint", o.stderr, "hint: --force-prune prunes over --max-prune and of --protect kinds, and garbage-collects over --max-collect")
		stays(fmt.Sprintf("apply %q", budget))
	}

	// Forced, both go.
	o, s = c.runConfig("apply", "--config", cfg, "--max-collect", "1", "--force-prune")
	for _, unit := range []string{"webapp-frontend", "monitoring"} {
		if r := unitsByName(s)[unit]; o.code != exitOK || r == nil || r.Reason != result.ReasonDeleteSucceed {
			t.Errorf("forced: exit %d, %s %+v", o.code, unit, r)
		}
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "frontend", metav1.GetOptions{}); err == nil {
		t.Error("forced: the collected unit's objects are still there")
	}
}
