package units

import (
	"slices"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
)

// A unit depending on one that waits (wait: true, or healthChecks
// naming a Kustomization it applied) depends on the units that one
// emitted, and on what those wait for in turn; never on itself or on a
// unit that depends on it (a cycle Flux would wait out until the
// timeout). Only dependsOn counts: a unit emitted by a waiting one runs
// after it, but does not wait for what it waits for.
func TestAddWaits(t *testing.T) {
	t.Parallel()
	ref := func(name string) config.Ref { return config.Ref{Namespace: "flux-system", Name: name} }
	unit := func(name string, wait bool, emittedBy ...string) *config.Unit {
		u := &config.Unit{Name: name, Ref: ref(name), Wait: wait}
		for _, e := range emittedBy {
			u.EmittedBy = append(u.EmittedBy, ref(e))
		}
		return u
	}
	health := func(u *config.Unit, names ...string) *config.Unit {
		for _, n := range names {
			u.HealthChecks = append(u.HealthChecks, config.HealthCheck{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization", Name: n, Namespace: "flux-system"})
		}
		return u
	}
	for _, tc := range []struct {
		name  string
		units []*config.Unit
		deps  map[string][]string // as the configuration has them
		want  map[string][]string
	}{
		{"a dependency that waits", []*config.Unit{unit("kyverno", true), unit("controller", false, "kyverno"), unit("policies", false)},
			map[string][]string{"controller": {"kyverno"}, "policies": {"kyverno"}},
			map[string][]string{"controller": {"kyverno"}, "policies": {"kyverno", "controller"}}},
		{"one that does not wait", []*config.Unit{unit("kyverno", false), unit("controller", false, "kyverno"), unit("policies", false)},
			map[string][]string{"controller": {"kyverno"}, "policies": {"kyverno"}},
			map[string][]string{"controller": {"kyverno"}, "policies": {"kyverno"}}},
		{"what waits waits in turn", []*config.Unit{unit("root", true), unit("mid", true, "root"), unit("leaf", false, "root", "mid"), unit("app", false)},
			map[string][]string{"mid": {"root"}, "leaf": {"mid"}, "app": {"root"}},
			map[string][]string{"mid": {"root"}, "leaf": {"mid"}, "app": {"root", "mid", "leaf"}}},
		{"what does not wait stops there", []*config.Unit{unit("root", true), unit("mid", false, "root"), unit("leaf", false, "root", "mid"), unit("app", false)},
			map[string][]string{"mid": {"root"}, "leaf": {"mid"}, "app": {"root"}},
			map[string][]string{"mid": {"root"}, "leaf": {"mid"}, "app": {"root", "mid"}}},
		{"healthChecks naming one", []*config.Unit{health(unit("infra", false), "b"), unit("a", false, "infra"), unit("b", false, "infra"), unit("app", false)},
			map[string][]string{"a": {"infra"}, "b": {"infra"}, "app": {"infra"}},
			map[string][]string{"a": {"infra"}, "b": {"infra"}, "app": {"infra", "b"}}},
		{"never the unit itself", []*config.Unit{unit("kyverno", true), unit("controller", false, "kyverno")},
			map[string][]string{"controller": {"kyverno"}},
			map[string][]string{"controller": {"kyverno"}}},
		{"never a cycle", []*config.Unit{unit("kyverno", true), unit("controller", false, "kyverno"), unit("policies", false)},
			map[string][]string{"controller": {"kyverno", "policies"}, "policies": {"kyverno"}},
			map[string][]string{"controller": {"kyverno", "policies"}, "policies": {"kyverno"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, u := range tc.units {
				for _, d := range tc.deps[u.Name] {
					if len(u.EmittedBy) == 0 || u.EmittedBy[len(u.EmittedBy)-1] != ref(d) {
						u.DependsOn = append(u.DependsOn, ref(d))
					}
				}
			}
			c := Config{Set: &config.Set{Units: tc.units}}
			var out []Unit
			for _, u := range tc.units {
				out = append(out, Unit{Options: pipeline.Options{Name: u.Name}, DependsOn: slices.Clone(tc.deps[u.Name])})
			}
			c.addWaits(out)
			for _, u := range out {
				if !slices.Equal(u.DependsOn, tc.want[u.Options.Name]) {
					t.Errorf("%s depends on %v, want %v", u.Options.Name, u.DependsOn, tc.want[u.Options.Name])
				}
				if added := len(u.DependsOn) > len(tc.deps[u.Options.Name]); added != (len(u.Options.Notes) == 1) {
					t.Errorf("%s: notes %q", u.Options.Name, u.Options.Notes)
				}
			}
			nodes := make([]Node, len(out))
			for i, u := range out {
				nodes[i] = Node{Name: u.Options.Name, DependsOn: u.DependsOn}
			}
			if _, err := NewGraph(nodes); err != nil {
				t.Error(err)
			}
		})
	}
}
