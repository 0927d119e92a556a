package helm

import (
	"slices"
	"strings"
	"testing"
)

// Releases are levelled by their dependsOn within the unit; a dependency
// outside it is noted, never waited for; a cycle is an error naming it.
func TestOrder(t *testing.T) {
	chart := func(name string, deps ...string) Chart {
		c := Chart{Release: Reference{Kind: "HelmRelease", Namespace: "apps", Name: name}, Source: name + ".yaml"}
		for _, d := range deps {
			c.DependsOn = append(c.DependsOn, Reference{Kind: "HelmRelease", Namespace: "apps", Name: d})
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		charts []Chart
		levels []int
		note   string
		err    string
	}{
		{"none depend", []Chart{chart("a"), chart("b")}, []int{0, 0}, "", ""},
		{"a chain, listed backwards", []Chart{chart("web", "api"), chart("api", "db"), chart("db")}, []int{2, 1, 0}, "", ""},
		{"a diamond", []Chart{chart("db"), chart("cache"), chart("api", "db", "cache"), chart("web", "api", "db")}, []int{0, 0, 1, 2}, "", ""},
		{"a dependency in another unit", []Chart{chart("web", "ingress")}, []int{0},
			"HelmRelease/apps/web (web.yaml): spec.dependsOn apps/ingress is not in this unit", ""},
		{"a cycle", []Chart{chart("a", "b"), chart("b", "c"), chart("c", "a")}, nil, "",
			"HelmRelease apps/a (a.yaml): spec.dependsOn: HelmReleases depend on each other in a cycle: HelmRelease/apps/a → HelmRelease/apps/b → HelmRelease/apps/c → HelmRelease/apps/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notes, err := order(tc.charts, nil)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var levels []int
			for _, c := range tc.charts {
				levels = append(levels, c.Level)
			}
			if !slices.Equal(levels, tc.levels) {
				t.Errorf("levels %v, want %v", levels, tc.levels)
			}
			if joined := strings.Join(notes, "\n"); (tc.note == "") != (joined == "") || !strings.Contains(joined, tc.note) {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
		})
	}
}
