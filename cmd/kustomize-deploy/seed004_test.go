package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// seedNamespaces are the namespaces seed 004's examples name: created by
// their own Kustomizations, deleted when the test ends.
var seedNamespaces = []string{"dev", "istio-system", "webapp"}

// Seed 004's documented examples (kustomize.fluxcd.io/v1alpha1) run as
// the seed writes them: backend with its health check; common before
// backend; istio's health check before backend; spec.prune as a label
// selector that prunes only what matches; backend applied as the
// webapp-reconciler account, which may write only in namespace webapp.
func TestSeed004Examples(t *testing.T) {
	c := newCLI(t)
	k := cluster.Client(t)
	t.Cleanup(func() {
		for _, ns := range seedNamespaces {
			_ = k.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{})
		}
	})
	repo := gitFixture(t, "seed-004/webapp")
	sources := []string{"--source", "GitRepository/default/webapp=" + repo, "--source", "GitRepository/default/istio=" + repo}
	run := func(config string) (outcome, map[string]*result.Result) {
		t.Helper()
		o, s := c.runConfig(append([]string{"apply", "--config", filepath.Join(repo, "clusters", config)}, sources...)...)
		if o.code != exitOK || !s.Ready {
			t.Fatalf("%s: exit %d\n%s\n%s", config, o.code, o.stdout, o.stderr)
		}
		return o, unitsByName(s)
	}

	// common, then backend.
	_, got := run("dependencies")
	if got["common"] == nil || got["backend"] == nil || got["backend"].StartedAt.Before(got["common"].StartedAt) {
		t.Fatalf("units: %+v", got)
	}
	if _, err := k.AppsV1().Deployments("dev").Get(t.Context(), "backend", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}

	// backend alone, its health check waited for.
	o, got := run("health")
	contains(t, "the health check", o.stderr, "[backend] waiting up to 2m0s for 1 object(s) to become ready")
	if r := got["backend"]; r.Reason != result.ReasonApplySucceed {
		t.Errorf("backend: %s %s", r.Reason, r.Message)
	}

	// istio's health check before backend.
	_, got = run("mesh")
	if got["istio"] == nil || got["backend"].StartedAt.Before(got["istio"].StartedAt) {
		t.Errorf("backend ran before istio: %+v", got)
	}
	contains(t, "notes", c.run(append([]string{"apply", "--config", filepath.Join(repo, "clusters", "mesh"), "--verbose"}, sources...)...).stderr,
		"default/backend: read as kustomize.fluxcd.io/v1alpha1", `spec.prune "part-of=webapp,component=backend" prunes only the objects matching it`)

	// spec.prune is a selector: of two objects that left backend's
	// build, the one whose labels still match is pruned, the one whose
	// label was taken off by hand is left alone.
	patch := []byte(`{"metadata":{"labels":{"component":null}}}`)
	if _, err := k.CoreV1().ConfigMaps("dev").Patch(t.Context(), "backend-settings", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	kustomization := filepath.Join(repo, "webapp/backend/kustomization.yaml")
	data, _ := os.ReadFile(kustomization)
	writeFile(t, kustomization, strings.NewReplacer("  - service.yaml\n", "", "  - settings.yaml\n", "").Replace(string(data)))
	_, got = run("mesh")
	if _, err := k.CoreV1().Services("dev").Get(t.Context(), "backend", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Service matching spec.prune was not pruned: %v", err)
	}
	if _, err := k.CoreV1().ConfigMaps("dev").Get(t.Context(), "backend-settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap outside spec.prune's selector was pruned: %v", err)
	}
	var reasons []string
	for _, e := range got["backend"].Entries {
		reasons = append(reasons, e.Object.String()+": "+string(e.Action)+" "+e.Reason)
	}
	contains(t, "backend's entries", strings.Join(reasons, "\n"), "Service/dev/backend: deleted", `ConfigMap/dev/backend-settings: skipped its labels do not match the prune selector "component=backend,part-of=webapp"`)

	// backend as webapp-reconciler, whose Role is in namespace webapp.
	tenancy := gitFixture(t, "seed-004/tenancy")
	tc := newCLI(t)
	o, s := tc.runConfig("apply", "--config", filepath.Join(tenancy, "clusters/tenancy"), "--source", "GitRepository/default/webapp="+tenancy)
	if o.code != exitOK || !s.Ready {
		t.Fatalf("tenancy: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	d, err := k.AppsV1().Deployments("webapp").Get(t.Context(), "backend", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Labels["component"] != "backend" {
		t.Errorf("backend's labels: %v", d.Labels)
	}
	// Outside namespace webapp, the account may not write: the seed's
	// "the reconciliation will fail".
	bk := filepath.Join(tenancy, "webapp/backend/kustomization.yaml")
	data, _ = os.ReadFile(bk)
	writeFile(t, bk, strings.Replace(string(data), "namespace: webapp", "namespace: dev", 1))
	o, s = tc.runConfig("apply", "--config", filepath.Join(tenancy, "clusters/tenancy"), "--source", "GitRepository/default/webapp="+tenancy)
	r := unitsByName(s)["backend"]
	if o.code != exitFail || r == nil || r.Ready {
		t.Fatalf("backend writing into dev as webapp-reconciler: exit %d %+v", o.code, r)
	}
	contains(t, "the refusal", r.Message, "system:serviceaccount:webapp:webapp-reconciler")
}
