package reach

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Which units a change reaches, rule by rule, without a repository.
func TestAffected(t *testing.T) {
	t.Parallel()
	reads := func(roots ...string) ReadSet { return ReadSet{Roots: roots} }
	charts := ReadSet{Roots: []string{"releases"}, Helm: true, ChartPaths: []string{"charts/podinfo"}}
	units := []Unit{
		{Name: "web", Reads: reads("apps/web", "apps/shared/patch.yaml")},
		{Name: "api", Reads: reads("apps/api"), Files: []string{"clusters/prod/settings.yaml"}},
		{Name: "crds", Reads: ReadSet{Roots: []string{"crds"}, CRDs: true}, CRDs: true},
		{Name: "widgets", Reads: reads("widgets"), DependsOn: []string{"crds"}},
		{Name: "gadgets", Reads: reads("gadgets"), DependsOn: []string{"widgets"}},
		{Name: "after-web", Reads: reads("after"), DependsOn: []string{"web"}},
		{Name: "releases", Reads: charts, Charts: true},
		{Name: "values", Reads: ReadSet{Roots: []string{"values"}, Helm: true, ValuesFrom: true}, Charts: true},
		{Name: "dynamic", Reads: ReadSet{Roots: []string{"dynamic"}, Helm: true, ChartPathsUnknown: true}, Charts: true},
	}
	isSource := func(f string) bool { return f == "flux/repositories.yaml" }
	isValues := func(f string) bool { return f == "clusters/prod/values.yaml" }
	inChart := func(f string) bool { return f == "charts/podinfo/values.yaml" || f == "charts/other/values.yaml" }
	cases := []struct {
		name  string
		files []string
		units []Unit
		want  []string
	}{
		{"a file a unit reads", []string{"apps/web/deploy.yaml"}, nil, []string{"web"}},
		{"a file it names from elsewhere", []string{"apps/shared/patch.yaml"}, nil, []string{"web"}},
		{"its values' file", []string{"clusters/prod/settings.yaml"}, nil, []string{"api"}},
		{"a unit's dependents are not reached by its files", []string{"apps/web/x.yaml"}, nil, []string{"web"}},
		{"a unit that may hold CRDs reaches its dependents, transitively", []string{"crds/crd.yaml"}, nil, []string{"crds", "gadgets", "widgets"}},
		{"a chart's file below the path a HelmRelease names", []string{"charts/podinfo/values.yaml"}, nil, []string{"dynamic", "releases"}},
		{"another chart's file", []string{"charts/other/values.yaml"}, nil, []string{"dynamic"}},
		{"a source's definition reaches every unit with charts", []string{"flux/repositories.yaml"}, nil, []string{"dynamic", "releases", "values"}},
		{"a ConfigMap reaches the units with valuesFrom (and, a YAML file no unit reads, those of unknown chart paths)", []string{"clusters/prod/values.yaml"}, nil, []string{"dynamic", "values"}},
		{"a YAML file no unit reads reaches the charts of unknown paths", []string{"somewhere/values.yaml"}, nil, []string{"dynamic"}},
		{"a file of the configuration's own is told by the definitions", []string{"clusters/prod/apps.yaml"}, nil, nil},
		{"neither a README", []string{"README.md"}, nil, nil},
		{"a unit whose reads are not known, whatever changed", []string{"README.md"}, []Unit{{Name: "remote", Reads: ReadSet{Unknown: "a remote base"}}}, []string{"remote"}},
		{"a unit whose Kustomization changed", nil, []Unit{{Name: "defined", Defined: true, DefinedWhy: "its Kustomization changed"}}, []string{"defined"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			why := Affected(append(slices.Clone(units), tc.units...), Change{Files: tc.files, Definitions: []string{"clusters/prod/apps.yaml"},
				Source: isSource, Values: isValues, ChartDir: inChart})
			got := slices.Sorted(maps.Keys(why))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reached (-want +got):\n%s\nwhy: %q", diff, why)
			}
			for n, w := range why {
				if w == "" {
					t.Errorf("%s reached, saying nothing", n)
				}
			}
		})
	}
}
