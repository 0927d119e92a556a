package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// An operator-managed fleet runs with no flag: the FluxInstance's
// spec.sync makes Flux's own sync, which runs first and applies the
// directory's own objects, and names the source its Kustomizations build
// from; the objects of Flux's other controllers (image automation, a
// Receiver) and the FluxInstance itself are left out of the apply, one
// note per reason naming them, while the units' other objects are
// applied.
func TestConfigOperatorFleetLeavesOutFluxObjects(t *testing.T) {
	c := newCLI(t)
	repo := gitFixture(t, "operator-fleet", "NAMESPACE", c.ns)
	o, s := c.runConfig("apply", "--config", filepath.Join(repo, "clusters/local"))
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	apps, sync := got["apps"], got[c.ns]
	if apps == nil || sync == nil || len(s.Units) != 2 || s.Units[0].Unit != c.ns {
		t.Fatalf("units: %v", names(s))
	}
	contains(t, "apps' notes", strings.Join(apps.Notes, "\n"),
		"ImageRepository/"+c.ns+"/podinfo, ImagePolicy/"+c.ns+"/podinfo, ImageUpdateAutomation/"+c.ns+"/fleet: Flux image automation: not applied",
		"$imagepolicy markers are left as they are",
		"Receiver/"+c.ns+"/github: a Flux notification Receiver: not applied: a webhook into the cluster has no meaning")
	contains(t, "the sync's notes", strings.Join(sync.Notes, "\n"),
		"FluxInstance/"+c.ns+"/flux: Flux Operator's FluxInstance: not applied",
		"ImagePolicy/"+c.ns+"/flux-operator: Flux image automation: not applied")
	for _, r := range s.Units {
		for _, e := range r.Entries {
			if e.Object.Group != "" {
				t.Errorf("unit %s applied %s", r.Unit, e.Object)
			}
		}
	}
	if _, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "operator-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap beside the FluxInstance and the ImagePolicy: %v", err)
	}
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), "podinfo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := cm.Data["image"]; img != "ghcr.io/stefanprodan/podinfo:6.5.0" {
		t.Errorf("the image: %q", img)
	}
	if r := apps.Reason; r != result.ReasonApplySucceed {
		t.Errorf("apps: %s %s", r, apps.Message)
	}
}

// A field kustomize-deploy does not know on one Kustomization refuses
// that unit alone: it fails (BuildFailed, at the field's file and line)
// and its objects are left as they are, its dependent is skipped, the
// others run, no unit is garbage-collected, and the exit code says so.
func TestConfigRefusesOneUnit(t *testing.T) {
	c := newCLI(t)
	repo := gitFixture(t, "refused-unit", "NAMESPACE", c.ns)
	config := filepath.Join(repo, "clusters/local")
	if o, s := c.runConfig("apply", "--config", config); o.code != exitOK || !s.Ready {
		t.Fatalf("first apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	units := filepath.Join(config, "units.yaml")
	data, err := os.ReadFile(units)
	if err != nil {
		t.Fatal(err)
	}
	// b gets a misspelled field (line 24); every unit's ConfigMap a new version.
	text := strings.Replace(string(data), "  path: ./b\n", "  path: ./b\n  prunee: true\n", 1)
	writeFile(t, units, text)
	for _, u := range []string{"a", "b", "c"} {
		p := filepath.Join(repo, u, "configmap.yaml")
		b, _ := os.ReadFile(p)
		writeFile(t, p, strings.Replace(string(b), `version: "1"`, `version: "2"`, 1))
	}

	o, s := c.runConfig("apply", "--config", config)
	if o.code != exitFail || s.Ready {
		t.Fatalf("exit %d, want %d\n%s\n%s", o.code, exitFail, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	if r := got["a"]; r == nil || r.Reason != result.ReasonApplySucceed {
		t.Errorf("a: %+v", r)
	}
	b := got["b"]
	if b == nil || b.Reason != result.ReasonBuildFailed || len(b.FileErrors) != 1 || b.FileErrors[0].File != "clusters/local/units.yaml" || b.FileErrors[0].Line != 24 {
		t.Fatalf("b: %+v", b)
	}
	contains(t, "b's message", b.Message, "clusters/local/units.yaml:24: Kustomization "+c.ns+"/b: spec.prunee: unknown field")
	if r := got["c"]; r == nil || r.Reason != result.ReasonDependencyNotReady {
		t.Errorf("c: %+v", r)
	}
	k := cluster.Client(t)
	for u, want := range map[string]string{"a": "2", "b": "1", "c": "1"} {
		cm, err := k.CoreV1().ConfigMaps(c.ns).Get(t.Context(), u, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("ConfigMap %s: %v", u, err)
		}
		if cm.Data["version"] != want {
			t.Errorf("ConfigMap %s: version %s, want %s", u, cm.Data["version"], want)
		}
	}
	if inv, _ := inventory.Load(t.Context(), runtimeClient(t), c.ns, "b"); inv == nil || len(inv.Entries) != 1 {
		t.Errorf("b's inventory: %+v", inv)
	}

	// Taken out of the configuration, b would be collected; refused, it
	// is not, and neither is anything else.
	writeFile(t, units, strings.Replace(text, "  name: a\n", "  name: a2\n", 1))
	o, s = c.runConfig("apply", "--config", config)
	if o.code != exitFail {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if inv, err := inventory.Load(t.Context(), runtimeClient(t), c.ns, "a"); inv == nil {
		t.Errorf("unit a, gone from the configuration, was collected while b is refused: %v", err)
	}
	contains(t, "warnings", o.stderr, "no unit is garbage-collected")
}

// Flux's CEL health checks judge a custom resource whose status the
// test writes: in progress (the wait times out naming the expression),
// then failed, then current; and readyExprs gate the dependents in
// place of the dependency's readiness: follower's, comparing version
// labels, lets it run while widgets fails; gated's, asking for Ready,
// holds it back until widgets is.
func TestConfigCELHealthAndReadyExpr(t *testing.T) {
	c := newCLI(t)
	repo := gitFixture(t, "cel-health", "NAMESPACE", c.ns)
	config := filepath.Join(repo, "clusters/local")
	widgets := dynamic.NewForConfigOrDie(cluster.Config).Resource(schema.GroupVersionResource{Group: "cel.example.com", Version: "v1", Resource: "widgets"}).Namespace(c.ns)
	setPhase := func(phase string, size int64) {
		t.Helper()
		w, err := widgets.Get(t.Context(), "sprocket", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w.Object["status"] = map[string]any{"phase": phase, "size": size}
		if _, err := widgets.UpdateStatus(t.Context(), w, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	applied := func(name string) bool {
		_, err := cluster.Client(t).CoreV1().ConfigMaps(c.ns).Get(t.Context(), name, metav1.GetOptions{})
		return err == nil
	}

	// Provisioning, once the run created it: in progress, until the
	// unit's timeout.
	done := make(chan outcome, 1)
	go func() { done <- c.run("apply", "--config", config, "--output", "json") }()
	for {
		if _, err := widgets.Get(t.Context(), "sprocket", metav1.GetOptions{}); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	setPhase("Provisioning", 0)
	o := <-done
	s := decodeSet(t, o)
	got := unitsByName(s)
	if o.code != exitFail || got["widgets"] == nil || got["widgets"].Reason != result.ReasonHealthCheckFailed {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "widgets' failure", got["widgets"].Message, "timeout after 30s", "Widget/"+c.ns+"/sprocket: InProgress: healthCheckExprs inProgress \"!has(status.phase) || status.phase == 'Provisioning'\" is true")
	if r := got["follower"]; r == nil || r.Reason != result.ReasonApplySucceed || !applied("follower") {
		t.Errorf("follower, whose readyExpr holds: %+v", r)
	}
	if r := got["gated"]; r == nil || r.Reason != result.ReasonDependencyNotReady || applied("gated") {
		t.Fatalf("gated, whose readyExpr does not hold: %+v", r)
	}
	contains(t, "gated's skip", got["gated"].Message, "widgets (readyExpr \"dep.status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')")

	// Failed: the wait ends at once, naming the expression.
	setPhase("Failed", 3)
	_, s = c.runConfig("apply", "--config", config)
	got = unitsByName(s)
	if r := got["widgets"]; r == nil || r.Reason != result.ReasonHealthCheckFailed || strings.Contains(r.Message, "timeout") {
		t.Fatalf("widgets: %+v", r)
	}
	contains(t, "widgets' failure", got["widgets"].Message, "1 object(s) failed", "Widget/"+c.ns+"/sprocket: Failed: healthCheckExprs failed \"status.phase == 'Failed'\" is true")
	if r := got["gated"]; r == nil || r.Reason != result.ReasonDependencyNotReady {
		t.Errorf("gated: %+v", r)
	}

	// Current: every unit runs.
	setPhase("Ready", 3)
	o, s = c.runConfig("apply", "--config", config)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if !applied("gated") {
		t.Error("gated did not run once widgets was ready")
	}
}

// spec.ignore (Flux 2.9) leaves /spec/replicas of Deployments to the
// cluster: the replicas an HPA set are no change in a diff, no drift,
// and an apply of another change to the Deployment keeps them.
func TestConfigIgnoreKeepsHPAReplicas(t *testing.T) {
	c := newCLI(t)
	repo := gitFixture(t, "ignore-hpa", "NAMESPACE", c.ns)
	config := filepath.Join(repo, "clusters/local")
	if o, s := c.runConfig("apply", "--config", config); o.code != exitOK || !s.Ready {
		t.Fatalf("apply: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	deployments := cluster.Client(t).AppsV1().Deployments(c.ns)
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: c.ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	if _, err := deployments.UpdateScale(t.Context(), "web", scale, metav1.UpdateOptions{FieldManager: "horizontal-pod-autoscaler"}); err != nil {
		t.Fatal(err)
	}
	replicas := func(when string) {
		t.Helper()
		d, err := deployments.Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *d.Spec.Replicas != 3 {
			t.Errorf("%s: replicas %d, want the HPA's 3", when, *d.Spec.Replicas)
		}
	}
	deployment := func(s *result.Set) result.Entry {
		t.Helper()
		for _, e := range unitsByName(s)["web"].Entries {
			if e.Object.Kind == "Deployment" {
				return e
			}
		}
		t.Fatalf("no Deployment entry: %+v", s.Units)
		return result.Entry{}
	}

	o, s := c.runConfig("diff", "--config", config)
	if e := deployment(s); o.code != exitOK || e.Action != result.Unchanged || e.Diff != "" {
		t.Errorf("diff: exit %d, Deployment %s\n%s", o.code, e.Action, e.Diff)
	}
	o, s = c.runConfig("drift", "--config", config, "--fail-on-drift")
	if o.code != exitOK || unitsByName(s)["web"].Drifted {
		t.Errorf("drift: exit %d, drifted %v\n%s", o.code, unitsByName(s)["web"].Drifted, o.stderr)
	}

	// Another change to the Deployment: shown and applied without the
	// replicas.
	p := filepath.Join(repo, "web/deployment.yaml")
	data, _ := os.ReadFile(p)
	writeFile(t, p, strings.Replace(string(data), "registry.example/web:1.0", "registry.example/web:1.1", 1))
	o, s = c.runConfig("diff", "--config", config)
	if e := deployment(s); e.Action != result.Configured || !strings.Contains(e.Diff, "web:1.1") || strings.Contains(e.Diff, "replicas:") {
		t.Errorf("diff of a new image: exit %d, Deployment %s\n%s", o.code, e.Action, e.Diff)
	}
	if o, s = c.runConfig("apply", "--config", config); o.code != exitOK || deployment(s).Action != result.Configured {
		t.Fatalf("apply of a new image: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	contains(t, "the apply's progress", o.stderr, "Deployment/"+c.ns+"/web: /spec/replicas kept as the cluster has it (spec.ignore)")
	replicas("after the apply")
	d, _ := deployments.Get(t.Context(), "web", metav1.GetOptions{})
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "registry.example/web:1.1" {
		t.Errorf("image %s", img)
	}
	replicas("at the end")
}

// A Flux Operator ResourceSet is expanded as the operator would: its
// inline inputs and a Static provider's make one ConfigMap and one
// Kustomization per tenant; the ConfigMaps are its unit's, the
// Kustomizations units of the configuration. An input taken away prunes
// its ConfigMap and collects its unit.
func TestConfigExpandsResourceSets(t *testing.T) {
	c := newCLI(t)
	repo := gitFixture(t, "resourceset", "NAMESPACE", c.ns)
	config := filepath.Join(repo, "clusters/local")
	o, s := c.runConfig("apply", "--config", config)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	got := unitsByName(s)
	for _, u := range []string{"tenants", "app-alpha", "app-beta", "app-gamma"} {
		if got[u] == nil || got[u].Reason != result.ReasonApplySucceed {
			t.Errorf("unit %s: %+v", u, got[u])
		}
	}
	contains(t, "tenants' notes", strings.Join(got["tenants"].Notes, "\n"),
		"ResourceSet/"+c.ns+"/tenants: Flux Operator's ResourceSet: not applied: expanded by this run",
		"ResourceSet/"+c.ns+"/tenants: 3 input set(s), 6 object(s) generated",
		"ResourceSetInputProvider/"+c.ns+"/late-tenant: Flux Operator's ResourceSetInputProvider: not applied: read by this run")
	cms := cluster.Client(t).CoreV1().ConfigMaps(c.ns)
	for tenant, provider := range map[string]string{"alpha": "tenants", "beta": "tenants", "gamma": "late-tenant"} {
		cm, err := cms.Get(t.Context(), "tenant-"+tenant, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["provider"] != provider || cm.Labels["team"] != "platform" || cm.Labels["resourceset.fluxcd.controlplane.io/name"] != "tenants" {
			t.Errorf("tenant-%s: %v %v", tenant, cm.Data, cm.Labels)
		}
		if app, err := cms.Get(t.Context(), "app-"+tenant, metav1.GetOptions{}); err != nil || app.Data["tenant"] != tenant {
			t.Errorf("app-%s: %v %v", tenant, err, app)
		}
	}

	// beta leaves: its ConfigMap is pruned, its unit collected.
	p := filepath.Join(repo, "tenants/resourceset.yaml")
	data, _ := os.ReadFile(p)
	writeFile(t, p, strings.Replace(string(data), "    - tenant: beta\n", "", 1))
	if o, s = c.runConfig("apply", "--config", config); o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	for _, name := range []string{"tenant-beta", "app-beta"} {
		if _, err := cms.Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s is still there: %v", name, err)
		}
	}
	if _, err := cms.Get(t.Context(), "app-alpha", metav1.GetOptions{}); err != nil {
		t.Errorf("app-alpha: %v", err)
	}
}

// Preview environments: a ResourceSet reads the open pull requests of
// the job's GitHub (a fake one here) through a GitHubPullRequest
// provider, with the job's token: a pull request labelled for previews
// gets its namespace when the run applies, and loses it once closed.
func TestConfigPreviewEnvironmentsFromPullRequests(t *testing.T) {
	c := newCLI(t)
	var mu sync.Mutex
	var pulls string // the open pull requests GitHub answers with, as JSON
	var tokens []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		tokens = append(tokens, r.Header.Get("Authorization"))
		if r.URL.Path != "/repos/acme/app/pulls" || r.URL.Query().Get("state") != "open" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, pulls)
	}))
	defer api.Close()
	setPulls := func(s string) { mu.Lock(); pulls = s; mu.Unlock() }
	c.env["GITHUB_TOKEN"] = "ghs_previewtoken0123456789"
	c.env["GITHUB_API_URL"] = api.URL
	c.env["GITHUB_SERVER_URL"] = "https://github.example"
	repo := gitFixture(t, "preview", "NAMESPACE", c.ns)
	config := filepath.Join(repo, "clusters/local")
	preview := c.ns + "-pr-12"
	t.Cleanup(func() {
		_ = cluster.Client(t).CoreV1().Namespaces().Delete(context.Background(), preview, metav1.DeleteOptions{})
	})

	setPulls(`[{"number": 12, "title": "Add a button", "user": {"login": "ann"}, "labels": [{"name": "deploy/flux-preview"}], "head": {"ref": "feat/button", "sha": "1234abcd"}},
		{"number": 11, "title": "No preview", "user": {"login": "bob"}, "labels": [], "head": {"ref": "feat/other", "sha": "99"}}]`)
	o, s := c.runConfig("apply", "--config", config)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	cm, err := cluster.Client(t).CoreV1().ConfigMaps(preview).Get(t.Context(), "preview", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the preview of pull request 12: %v", err)
	}
	if cm.Data["branch"] != "feat/button" || cm.Data["sha"] != "1234abcd" || cm.Data["chart"] != "app" {
		t.Errorf("its inputs: %v", cm.Data)
	}
	if _, err := cluster.Client(t).CoreV1().Namespaces().Get(t.Context(), c.ns+"-pr-11", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a pull request without the label got a preview: %v", err)
	}
	mu.Lock()
	if len(tokens) == 0 || tokens[0] != "Bearer ghs_previewtoken0123456789" {
		t.Errorf("GitHub was asked with %q", tokens)
	}
	mu.Unlock()
	if strings.Contains(o.stdout+o.stderr, "ghs_previewtoken0123456789") {
		t.Error("the token shows in the output")
	}

	// Closed: its preview goes.
	setPulls(`[]`)
	if o, s = c.runConfig("apply", "--config", config); o.code != exitOK || !s.Ready {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	ns, err := cluster.Client(t).CoreV1().Namespaces().Get(t.Context(), preview, metav1.GetOptions{})
	if err == nil && ns.DeletionTimestamp == nil {
		t.Errorf("the preview of the closed pull request is still there\n%s\n%s", o.stdout, o.stderr)
	}
}
