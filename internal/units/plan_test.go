package units

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
)

func unit(name string, kubeconfig string, deps ...string) *config.Unit {
	u := &config.Unit{Name: name, Ref: config.Ref{Namespace: "flux-system", Name: name}}
	for _, d := range deps {
		u.DependsOn = append(u.DependsOn, config.Ref{Namespace: "flux-system", Name: d})
	}
	if kubeconfig != "" {
		u.KubeConfig = &config.KubeConfig{SecretName: kubeconfig}
	}
	return u
}

func TestPlan(t *testing.T) {
	set := &config.Set{Units: []*config.Unit{
		unit("webapp-frontend", "", "webapp-backend"),
		unit("monitoring", "staging"),
		unit("istio", ""),
		unit("webapp-backend", "", "webapp-common"),
		unit("webapp-common", "", "istio"),
		unit("logging", "staging", "external-unit"), // a dependency outside the configuration
	}}
	got, err := Plan(set, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []Group{
		{Name: "webapp-frontend", Units: "webapp-frontend,istio,webapp-backend,webapp-common"},
		{Name: "monitoring", Units: "monitoring"},
		{Name: "logging", Units: "logging"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("by group:\n%+v\nwant\n%+v", got, want)
	}
	got, _ = Plan(set, true)
	want = []Group{
		{Name: "default", Units: "webapp-frontend,istio,webapp-backend,webapp-common"},
		{Name: "staging", Units: "monitoring,logging", Cluster: "staging"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("by cluster:\n%+v\nwant\n%+v", got, want)
	}
	set.Units[2].DependsOn = []config.Ref{{Namespace: "flux-system", Name: "webapp-frontend"}}
	if _, err := Plan(set, false); err == nil || !strings.Contains(err.Error(), "dependency cycle") {
		t.Errorf("a cycle: %v", err)
	}
}

// A directory of configurations in Flux's layout (a cluster per
// subdirectory) gives a group per configuration; a broken one fails the
// plan naming it.
func TestPlanConfigs(t *testing.T) {
	root := t.TempDir()
	ks := func(name, deps string) string {
		return "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\nspec:\n  interval: 10m\n  sourceRef: {kind: GitRepository, name: flux-system}\n  path: ./apps\n  prune: true\n" + deps
	}
	files := map[string]string{
		"clusters/staging/apps.yaml": ks("infra", "") + ks("apps", "  dependsOn: [{name: infra}]\n"),
		"clusters/prod-eu/apps.yaml": ks("apps", ""),
		"clusters/docs/README.md":    "no Kustomizations here",
		"clusters/.hidden/apps.yaml": "not: read",
		"apps/configmap.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
	}
	for p, data := range files {
		p = filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := paths.Resolve(filepath.Join(root, "clusters"), root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := PlanConfigs(root, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Group{
		{Name: "prod-eu", Units: "apps", Config: "clusters/prod-eu"},
		{Name: "staging", Units: "infra,apps", Config: "clusters/staging"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}

	// A unit whose spec.path is not there fails the plan as it would fail
	// the job.
	elsewhere := filepath.Join(root, "clusters/staging/elsewhere.yaml")
	if err := os.WriteFile(elsewhere, []byte(strings.Replace(ks("db", ""), "./apps", "./db", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanConfigs(root, dir, nil); err == nil || !strings.Contains(err.Error(), "configuration clusters/staging: unit db (clusters/staging/elsewhere.yaml:2): spec.path") {
		t.Errorf("a missing path: %v", err)
	}
	if err := os.Remove(elsewhere); err != nil {
		t.Fatal(err)
	}

	broken := filepath.Join(root, "clusters/prod-eu/apps.yaml")
	if err := os.WriteFile(broken, []byte(ks("apps", "  sourceRefs: oops\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	// A Kustomization that does not read is refused when its job runs
	// it: the plan lists it.
	if got, err := PlanConfigs(root, dir, nil); err != nil || len(got) != 2 || got[0].Units != "apps" {
		t.Errorf("a refused unit: %+v, %v", got, err)
	}
}
