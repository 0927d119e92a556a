package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

// chartUnit writes a unit holding a HelmRepository and a HelmRelease of
// the web chart at version, with spec.values values, in namespace ns.
func chartUnit(t *testing.T, dir, ns, repoURL, version, values string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+ns+
		"\nspec:\n  interval: 1h\n  url: "+repoURL+"\n")
	writeFile(t, filepath.Join(dir, "release.yaml"), "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: "+ns+
		"\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: web\n      version: \""+version+"\"\n      sourceRef: {kind: HelmRepository, name: charts}\n  values:\n"+values)
}

// A HelmRelease deploys its chart with no Flux in the cluster: rendered
// here, its objects applied, re-applied without change, diffed when its
// values or its chart's version change, and pruned when it leaves Git.
func TestHelmReleaseDeploysWithoutFlux(t *testing.T) {
	c := newCLI(t)
	repo := helmtest.NewRepository(t,
		helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"},
		helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.1.0", AppVersion: "1.1"})
	dir := t.TempDir()
	chartUnit(t, dir, c.ns, repo.URL, "1.0.0", "    greeting: hello\n")
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir()}

	o, r := c.apply(args...)
	if o.code != exitOK {
		t.Fatalf("apply: exit %d: %s %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "apply's progress", o.stderr, "HelmRelease/"+c.ns+"/web: chart web 1.0.0", "is read, not applied")
	text := c.run(append([]string{"diff"}, args...)...)
	contains(t, "the text report", text.stdout, "release HelmRelease/"+c.ns+"/web: chart web 1.0.0 (sha256:", "3 object(s): 3 unchanged")
	var kinds []string
	for _, e := range r.Entries {
		kinds = append(kinds, e.Object.Kind)
		if e.Source != filepath.Join(dir, "release.yaml") && !strings.HasSuffix(e.Source, "release.yaml") {
			t.Errorf("%s comes from %q, want the HelmRelease's file", e.Object, e.Source)
		}
	}
	if strings.Join(kinds, ",") != "ConfigMap,Service,Deployment" || r.Counts.Created != 3 {
		t.Fatalf("entries %v, counts %+v", kinds, r.Counts)
	}
	client := cluster.Client(t)
	dep, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != "registry.example/web:1.0" {
		t.Fatalf("the chart's Deployment: %v %v", err, dep)
	}

	if o, r := c.apply(args...); o.code != exitOK || r.Counts.Unchanged != 3 || r.Changed() {
		t.Errorf("a second apply: exit %d, counts %+v", o.code, r.Counts)
	}

	chartUnit(t, dir, c.ns, repo.URL, "1.0.0", "    greeting: hola\n")
	o = c.run(append([]string{"diff"}, args...)...)
	contains(t, "diff of a values change", o.stdout, "-  greeting: hello\n+  greeting: hola", "checksum/settings")

	chartUnit(t, dir, c.ns, repo.URL, "1.x", "    greeting: hello\n")
	o = c.run(append([]string{"diff", "-o", "json"}, args...)...)
	var bump result.Result
	if err := json.Unmarshal([]byte(o.stdout), &bump); err != nil {
		t.Fatalf("diff -o json: %v\n%s", err, o.stderr)
	}
	var depDiff string
	for _, e := range bump.Entries {
		if e.Object.Kind == "Deployment" {
			depDiff = e.Diff
			if e.Release != "HelmRelease/"+c.ns+"/web" {
				t.Errorf("the Deployment's entry names release %q", e.Release)
			}
		}
	}
	if len(bump.Releases) != 1 || bump.Releases[0].Chart != "web" || bump.Releases[0].Version != "1.1.0" || len(bump.Releases[0].Objects) != 3 {
		t.Errorf("the diff's releases: %+v", bump.Releases)
	}
	contains(t, "the Deployment's diff of a chart bump", depDiff, "-      - image: registry.example/web:1.0\n+      - image: registry.example/web:1.1", "+    helm.sh/chart: web-1.1.0")

	if err := os.Remove(filepath.Join(dir, "release.yaml")); err != nil {
		t.Fatal(err)
	}
	if o, r := c.apply(args...); o.code != exitOK || r.Counts.Deleted != 3 {
		t.Fatalf("apply without the HelmRelease: exit %d, counts %+v\n%s", o.code, r.Counts, o.stderr)
	}
	if _, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the chart's Deployment after its HelmRelease left: %v", err)
	}
}

// With --helm-controller, HelmReleases are applied as they are, not
// rendered: on a cluster without Flux's CRDs that fails on their kind.
func TestHelmControllerAppliesHelmReleasesAsTheyAre(t *testing.T) {
	c := newCLI(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	chartUnit(t, dir, c.ns, repo.URL, "1.0.0", "    greeting: hello\n")
	o, r := c.apply("--name", "web", "--path", dir, "-n", c.ns, "--helm-controller")
	if o.code != exitFail || !strings.Contains(r.Message+o.stderr, "HelmRelease") {
		t.Errorf("--helm-controller on a cluster without Flux's CRDs: exit %d, %s %s", o.code, r.Reason, r.Message)
	}
	if repo.Requests("index.yaml") != 0 {
		t.Error("--helm-controller read the chart repository")
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range inventoryEntries(inv) {
		if e.ID.Kind == "Deployment" {
			t.Errorf("--helm-controller rendered the chart: %v", e.ID)
		}
	}
	if _, err := cluster.Client(t).AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("--helm-controller rendered the chart: the Deployment %v", err)
	}
}

// inventoryEntries are inv's entries, none when there is no inventory.
func inventoryEntries(inv *inventory.Inventory) []inventory.Entry {
	if inv == nil {
		return nil
	}
	return inv.Entries
}

// hookedUnit writes a unit holding a HelmRepository and a HelmRelease of
// the hooked chart with spec.values values, in namespace ns.
func hookedUnit(t *testing.T, dir, ns, repoURL, values string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+ns+
		"\nspec:\n  interval: 1h\n  url: "+repoURL+"\n")
	writeFile(t, filepath.Join(dir, "release.yaml"), "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: "+ns+
		"\nspec:\n  interval: 10m\n  timeout: 2m\n  chart:\n    spec:\n      chart: hooked\n      sourceRef: {kind: HelmRepository, name: charts}\n  values:\n"+values)
}

// A chart's hooks run as Helm runs them, with no Helm in the cluster:
// pre-install before the chart's resources, post-install once they are
// ready; pre-upgrade when the release changed and not on a re-run of the
// same chart and values; a failing hook fails the unit before the resources change;
// an object of a hook's name that is not provably a hook is left alone.
func TestHelmReleaseRunsItsHooks(t *testing.T) {
	c := newCLI(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "hooked"), Version: "0.1.0"})
	dir := t.TempDir()
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir()}
	client := cluster.Client(t)
	job := func() (uid types.UID, schema string) {
		t.Helper()
		j, err := client.BatchV1().Jobs(c.ns).Get(t.Context(), "web-migrate", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the migration Job: %v", err)
		}
		return j.UID, j.Spec.Template.Spec.Containers[0].Args[1]
	}
	configMapData := func(name string) map[string]string {
		t.Helper()
		cm, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("ConfigMap %s: %v", name, err)
		}
		return cm.Data
	}
	configMap := func(name string) string { return configMapData(name)["schema"] }
	hookEntries := func(r *result.Result) []string {
		var out []string
		for _, e := range r.Entries {
			if e.Stage == result.StageHooks {
				out = append(out, e.Object.String()+" "+string(e.Action)+" "+strings.SplitN(e.Reason, ",", 2)[0])
			}
		}
		return out
	}

	hookedUnit(t, dir, c.ns, repo.URL, "    schema: \"1\"\n")
	o, r := c.apply(args...)
	if o.code != exitOK {
		t.Fatalf("install: exit %d: %s %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	want := []string{"Job/" + c.ns + "/web-migrate created pre-install hook", "ConfigMap/" + c.ns + "/web-installed created post-install hook"}
	if got := hookEntries(r); !slices.Equal(got, want) {
		t.Errorf("hooks of the install: %q, want %q", got, want)
	}
	contains(t, "the install's progress", o.stderr, "note: chart hooked 0.1.0: hooks Job/web-cleanup (pre-delete) are not run")
	installed, schema := job()
	if schema != "1" || configMap("web-installed") != "1" || configMap("web-settings") != "1" || configMapData("web-settings")["upgrade"] != "false" {
		t.Fatalf("after the install: Job --to %s", schema)
	}
	inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range inv.Entries {
		if strings.Contains(e.ID.Name, "migrate") || strings.Contains(e.ID.Name, "installed") {
			t.Errorf("a hook is in the inventory, so it would be pruned: %v", e.ID)
		}
	}
	if len(inv.Status.Releases) != 1 || inv.Status.Releases[0].Name != c.ns+"/web" {
		t.Errorf("the inventory's releases: %+v", inv.Status.Releases)
	}

	o, r = c.apply(args...)
	if o.code != exitOK || len(hookEntries(r)) != 0 || r.Changed() {
		t.Errorf("a re-run: exit %d, hooks %q, counts %+v", o.code, hookEntries(r), r.Counts)
	}
	contains(t, "the re-run's progress", o.stderr, "1 release(s)' charts and values are unchanged since the last apply")
	if uid, _ := job(); uid != installed {
		t.Error("a re-run ran the migration again")
	}

	hookedUnit(t, dir, c.ns, repo.URL, "    schema: \"2\"\n")
	o = c.run(append([]string{"diff"}, args...)...)
	contains(t, "the upgrade's diff", o.stdout, "HelmRelease/"+c.ns+"/web: the apply runs its pre-upgrade hooks Job/"+c.ns+"/web-migrate")
	o, r = c.apply(args...)
	if o.code != exitOK {
		t.Fatalf("upgrade: exit %d: %s %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	if got, want := hookEntries(r), []string{"Job/" + c.ns + "/web-migrate created pre-upgrade hook"}; !slices.Equal(got, want) {
		t.Errorf("hooks of the upgrade: %q, want %q", got, want)
	}
	if uid, schema := job(); uid == installed || schema != "2" {
		t.Errorf("the upgrade's migration: same Job %v, --to %s", uid == installed, schema)
	}
	if configMap("web-installed") != "1" || configMap("web-settings") != "2" {
		t.Error("the upgrade ran the post-install hook, or did not apply the chart")
	}
	if configMapData("web-settings")["upgrade"] != "true" {
		t.Error("the upgrade rendered without .Release.IsUpgrade")
	}

	hookedUnit(t, dir, c.ns, repo.URL, "    schema: \"3\"\n    failMigration: true\n")
	o, r = c.apply(args...)
	if o.code != exitFail || r.Reason != result.ReasonApplyFailed {
		t.Fatalf("a failing migration: exit %d, %s %s", o.code, r.Reason, r.Message)
	}
	contains(t, "a failing migration", r.Message, "pre-upgrade hook Job/"+c.ns+"/web-migrate", "templates/migrate.yaml", "HelmRelease/"+c.ns+"/web", "the Job failed")
	if configMap("web-settings") != "2" {
		t.Error("the chart's resources changed although its pre-upgrade hook failed")
	}

	// A Job of the hook's name that is not a hook: never deleted.
	if err := client.BatchV1().Jobs(c.ns).Delete(t.Context(), "web-migrate", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "web-migrate", Namespace: c.ns}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "other", Image: "registry.example/other:1"}}}}}}
	var created *batchv1.Job
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		created, err = client.BatchV1().Jobs(c.ns).Create(ctx, foreign, metav1.CreateOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("creating a foreign Job: %v", err)
	}
	hookedUnit(t, dir, c.ns, repo.URL, "    schema: \"4\"\n")
	o, r = c.apply(args...)
	if o.code != exitFail {
		t.Fatalf("a foreign object in a hook's place: exit %d, %s", o.code, r.Message)
	}
	contains(t, "a foreign object in a hook's place", r.Message, "is not a hook of this unit")
	if j, err := client.BatchV1().Jobs(c.ns).Get(t.Context(), "web-migrate", metav1.GetOptions{}); err != nil || j.UID != created.UID {
		t.Errorf("the foreign Job was replaced: %v", err)
	}
}

// A HelmRelease depending on another of its unit is applied only once the
// other's objects are ready: while the database's pods fail their
// readiness, the app is not applied at all.
func TestHelmReleaseWaitsForItsDependsOn(t *testing.T) {
	c := newCLI(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	release := func(name, extra string) string {
		return "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: " + name + "\n  namespace: " + c.ns +
			"\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: web\n      sourceRef: {kind: HelmRepository, name: charts}\n" + extra
	}
	unready := "  postRenderers:\n  - kustomize:\n      patches:\n      - target: {kind: Deployment}\n        patch: |\n          - op: add\n            path: /spec/template/metadata/labels/" +
		strings.ReplaceAll(testcluster.FailReadinessLabel, "/", "~1") + "\n            value: \"" + testcluster.FailReadinessValue + "\"\n"
	writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+c.ns+"\nspec:\n  url: "+repo.URL+"\n")
	writeFile(t, filepath.Join(dir, "app.yaml"), release("app", "  dependsOn:\n  - name: db\n"))
	writeFile(t, filepath.Join(dir, "db.yaml"), release("db", unready))
	args := []string{"--name", "stack", "--path", dir, "--chart-cache", t.TempDir(), "--timeout", "15s"}
	client := cluster.Client(t)

	o, r := c.apply(args...)
	if o.code != exitFail || r.Reason != result.ReasonHealthCheckFailed {
		t.Fatalf("a dependency that never gets ready: exit %d, %s %s", o.code, r.Reason, r.Message)
	}
	contains(t, "the failure", r.Message, "HelmReleases depending on others were not applied", "Deployment/"+c.ns+"/db")
	if _, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the app was applied before the release it depends on was ready: %v", err)
	}

	writeFile(t, filepath.Join(dir, "db.yaml"), release("db", ""))
	o, r = c.apply(args...)
	if o.code != exitOK {
		t.Fatalf("once the dependency gets ready: exit %d, %s %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	contains(t, "the progress", o.stderr, "object(s) of the releases at dependsOn level 0, before those depending on them")
	if _, err := client.AppsV1().Deployments(c.ns).Get(t.Context(), "app", metav1.GetOptions{}); err != nil {
		t.Errorf("the app: %v", err)
	}
}

// A unit whose inputs, charts and values are those of its last apply,
// with every object untouched since, is not dry-run or applied again, as
// helm-controller does not upgrade such a release; an edit in the
// cluster, or a newer chart in the HelmRelease's version range with Git
// unchanged, applies again.
func TestHelmReleaseUnchangedIsNotAppliedAgain(t *testing.T) {
	c := newCLI(t)
	web := filepath.Join("..", "..", "testdata", "charts", "web")
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: web, Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	chartUnit(t, dir, c.ns, repo.URL, "1.x", "    greeting: hello\n")
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir()}
	c.countedApply(args...)

	o, r, n := c.countedApplyOutput(args...)
	contains(t, "progress", o.stderr, "release(s)' charts and values are unchanged since the last apply")
	if n.ByMethod["PATCH dryRun"] != 0 || n.ByMethod["PATCH"] != 0 {
		t.Errorf("a re-run with nothing changed dry-ran or applied: %+v", n.ByMethod)
	}
	if len(r.Entries) != 3 || r.Changed() || len(r.Releases) != 1 {
		t.Errorf("the re-run's entries %+v, releases %+v", r.Entries, r.Releases)
	}

	cms := cluster.Client(t).CoreV1().ConfigMaps(c.ns)
	cm, err := cms.Get(t.Context(), "web-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = "edited by hand"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, _ = c.countedApply(args...)
	wantActions(t, r, map[string]result.Action{"ConfigMap/" + c.ns + "/web-settings": result.Configured, "Deployment/" + c.ns + "/web": result.Unchanged})

	repo.Add(helmtest.Chart{Dir: web, Version: "1.1.0", AppVersion: "1.1"})
	o, r, _ = c.countedApplyOutput(args...)
	if strings.Contains(o.stderr, "unchanged since the last apply") {
		t.Errorf("a newer chart in range was taken for unchanged:\n%s", o.stderr)
	}
	wantActions(t, r, map[string]result.Action{"Deployment/" + c.ns + "/web": result.Configured})
	dep, err := cluster.Client(t).AppsV1().Deployments(c.ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != "registry.example/web:1.1" {
		t.Errorf("after 1.1.0 was published: %v %v", err, dep)
	}
}

// Templates' lookup reads the live cluster, read-only, as the unit's
// identity: a ConfigMap created beforehand lands in the rendered objects,
// and a change to it shows in the next diff; a Secret's value read so is
// masked in every output. .Capabilities are the cluster's.
func TestHelmReleaseLookupReadsTheCluster(t *testing.T) {
	const token, newToken = "lookup-tok-Zq81", "lookup-tok-Wx27"
	c := newCLI(t)
	client := cluster.Client(t)
	if _, err := client.CoreV1().ConfigMaps(c.ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "colours", Namespace: c.ns}, Data: map[string]string{"colour": "blue"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets(c.ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: c.ns}, StringData: map[string]string{"token": token}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "caps"), Version: "0.1.0"})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+c.ns+"\nspec:\n  interval: 1h\n  url: "+repo.URL+"\n")
	writeFile(t, filepath.Join(dir, "release.yaml"), "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: caps\n  namespace: "+c.ns+
		"\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: caps\n      version: \"0.1.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n  values:\n    lookupConfigMap: colours\n    lookupSecret: token\n")
	args := []string{"--name", "caps", "--path", dir, "--chart-cache", t.TempDir()}
	noLeak := func(what string, o outcome) {
		t.Helper()
		for _, s := range []string{token, newToken} {
			if strings.Contains(o.stdout+o.stderr, s) {
				t.Errorf("%s shows the looked-up Secret's value %q:\n%s\n%s", what, s, o.stdout, o.stderr)
			}
		}
	}

	o, r := c.apply(args...)
	if o.code != exitOK {
		t.Fatalf("apply: exit %d: %s %s\n%s", o.code, r.Reason, r.Message, o.stderr)
	}
	noLeak("apply", o)
	cm, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "caps-caps", metav1.GetOptions{})
	if err != nil || cm.Data["looked-up"] != "blue" || cm.Data["token"] != token || !strings.HasPrefix(cm.Data["kubeVersion"], "v1.37") {
		t.Fatalf("the chart's ConfigMap: %v %v", err, cm)
	}

	colours, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "colours", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	colours.Data["colour"] = "red"
	updated, err := client.CoreV1().ConfigMaps(c.ns).Update(t.Context(), colours, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets(c.ns).Update(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: c.ns}, StringData: map[string]string{"token": newToken}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	o = c.run(append([]string{"diff"}, args...)...)
	contains(t, "the diff after the looked-up ConfigMap changed", o.stdout, "-  looked-up: blue\n", "+  looked-up: red\n", "token: '*** (changed, sha256:")
	noLeak("diff", o)
	if got, err := client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "colours", metav1.GetOptions{}); err != nil || got.ResourceVersion != updated.ResourceVersion {
		t.Errorf("the looked-up ConfigMap was written: %v %+v", err, got)
	}
}

// spec.driftDetection.ignore is honoured as helm-controller honours it:
// replicas an autoscaler (here, a hand) set stay while the release is
// not upgraded, and neither diff nor apply reverts them; other drift is
// corrected; an upgrade applies the chart's value again.
func TestHelmReleaseDriftDetectionIgnore(t *testing.T) {
	c := newCLI(t)
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: filepath.Join("..", "..", "testdata", "charts", "web"), Version: "1.0.0", AppVersion: "1.0"})
	dir := t.TempDir()
	release := func(greeting string) {
		chartUnit(t, dir, c.ns, repo.URL, "1.0.0", "    greeting: "+greeting+"\n"+
			"  driftDetection:\n    mode: enabled\n    ignore:\n    - paths: [/spec/replicas]\n      target: {kind: Deployment}\n")
	}
	release("hello")
	args := []string{"--name", "web", "--path", dir, "--chart-cache", t.TempDir()}
	noWait := append(slices.Clone(args), "--wait=false") // diff never waits: it has no --wait
	if o, r := c.apply(noWait...); o.code != exitOK {
		t.Fatalf("apply: %s %s\n%s", r.Reason, r.Message, o.stderr)
	}
	client := cluster.Client(t)
	deps, cms := client.AppsV1().Deployments(c.ns), client.CoreV1().ConfigMaps(c.ns)
	scale := func(n int32) {
		t.Helper()
		// The Deployment's controller writes its status meanwhile.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d, err := deps.Get(t.Context(), "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			d.Spec.Replicas = &n
			_, err = deps.Update(t.Context(), d, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	replicas := func() int32 {
		t.Helper()
		d, err := deps.Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *d.Spec.Replicas
	}
	scale(3)
	cm, err := cms.Get(t.Context(), "web-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = "edited by hand"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	o := c.run(append([]string{"diff"}, args...)...)
	contains(t, "the diff", o.stdout+o.stderr, "/spec/replicas kept as the cluster has it (HelmRelease/"+c.ns+"/web's spec.driftDetection.ignore)", "+  greeting: hello")
	if strings.Contains(o.stdout, "replicas") {
		t.Errorf("the diff shows the ignored replicas:\n%s", o.stdout)
	}
	if o, r := c.apply(noWait...); o.code != exitOK || replicas() != 3 {
		t.Fatalf("apply over ignored drift: exit %d %s, replicas %d, want 3 kept\n%s", o.code, r.Message, replicas(), o.stderr)
	}
	if cm, _ := cms.Get(t.Context(), "web-settings", metav1.GetOptions{}); cm == nil || cm.Data["greeting"] != "hello" {
		t.Errorf("drift outside the ignored paths was not corrected: %v", cm)
	}

	release("hola") // an upgrade applies what the chart renders
	if o, r := c.apply(noWait...); o.code != exitOK || replicas() != 1 {
		t.Errorf("upgrade: exit %d %s, replicas %d, want the chart's 1", o.code, r.Message, replicas())
	}
}
