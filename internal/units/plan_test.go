package units

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
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
