package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
)

// The layout is opened as a run opens it, with no cluster, so the
// Kustomizations are found by the engine's own building: the root and
// every app, each with its dependency, path, component and values.
func TestHomeOpsLayoutIsFoundByBuilding(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 101 units")
	}
	l := newHomeLayout("kdh")
	config, err := l.Write(t.Context(), filepath.Join(t.TempDir(), "repo"), false)
	if err != nil {
		t.Fatal(err)
	}
	run, err := units.Open(t.Context(), units.Spec{
		Path: config, Unit: spec.Default(), Getenv: func(string) string { return "" },
		Cluster: func(string) (*kube.Clients, error) { return nil, nil },
	})
	if err != nil {
		t.Fatalf("units.Open: %v", err)
	}
	defer run.Close()
	if len(run.Warnings) > 0 {
		t.Errorf("warnings: %v", run.Warnings)
	}
	if run.Dir.Rel != homeConfigDir {
		t.Errorf("configuration at %q, want %q", run.Dir.Rel, homeConfigDir)
	}
	want := map[string]dagUnit{}
	for _, u := range l.Units() {
		want[u.Name] = u
	}
	set := run.Set()
	if len(set.Units) != 1+homeGroups*homeAppsPerGroup || len(want) != len(set.Units) {
		t.Fatalf("%d units found, want the root and %d apps (layout lists %d)", len(set.Units), homeGroups*homeAppsPerGroup, len(want))
	}
	for _, got := range set.Units {
		u, ok := want[got.Name]
		if !ok {
			t.Errorf("unexpected unit %s", got.Name)
			continue
		}
		var deps []string
		for _, d := range got.DependsOn {
			deps = append(deps, d.Name)
		}
		if u.Level == 1 {
			if len(deps) != 0 || got.Path != "kubernetes/apps" {
				t.Errorf("root %s: path %q, depends on %v", got.Name, got.Path, deps)
			}
			continue
		}
		// An app found by building runs after the root; its own
		// dependsOn is its group's first app.
		if u.Level == 3 && !strings.Contains(strings.Join(deps, ","), u.DependsOn) {
			t.Errorf("app %s depends on %v, want %s among them", got.Name, deps, u.DependsOn)
		}
		// The root's patch gives every app the root's substituteFrom.
		if !got.Prune || got.Wait || len(got.Components) != 1 || got.Substitute["APP"] != got.Name ||
			len(got.SubstituteFrom) != 1 || got.EmittedBy == nil {
			t.Errorf("app %s: prune %t wait %t components %v substitute %v from %v emitted by %v",
				got.Name, got.Prune, got.Wait, got.Components, got.Substitute, got.SubstituteFrom, got.EmittedBy)
		}
	}
}

// Every app deploys ObjectsPerApp objects: the placeholders in the
// repository, the values in the rendered copy, the same objects in both.
func TestHomeOpsLayoutCounts(t *testing.T) {
	l := newHomeLayout("kdh")
	if l.Apps() != 100 || l.Objects() != 3000 {
		t.Fatalf("%d apps of %d objects, want 100 of 3,000", l.Apps(), l.Objects())
	}
	root := filepath.Join(t.TempDir(), "repo")
	if _, err := l.Write(t.Context(), root, true); err != nil {
		t.Fatal(err)
	}
	var ks, objects, namespaces int
	err := filepath.WalkDir(filepath.Join(root, "kubernetes/apps"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch d.Name() {
		case "ks.yaml":
			ks++
			if !strings.Contains(string(data), "wait: true") {
				t.Errorf("%s lacks wait: true", p)
			}
		case "objects.yaml":
			n := len(docs(string(data)))
			objects += n
			if n != homeObjectsPerApp || !strings.Contains(string(data), "${APP}") {
				t.Errorf("%s: %d objects, want %d with placeholders", p, n, homeObjectsPerApp)
			}
		case "namespace.yaml":
			namespaces++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ks != l.Apps() || objects != l.Objects() || namespaces != homeGroups {
		t.Errorf("%d ks.yaml, %d objects, %d namespaces; want %d, %d, %d", ks, objects, namespaces, l.Apps(), l.Objects(), homeGroups)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Errorf("not a Git repository: %v", err)
	}

	dir := t.TempDir()
	if err := l.WriteRendered(dir); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		rendered = append(rendered, docs(string(data))...)
	}
	if len(rendered) != l.Objects()+homeGroups {
		t.Fatalf("%d rendered objects, want %d and %d Namespaces", len(rendered), l.Objects(), homeGroups)
	}
	for _, d := range rendered {
		if strings.Contains(d, "${") {
			t.Fatalf("placeholder left in a rendered object:\n%s", d)
		}
		if !strings.Contains(d, "kind: Namespace") && (!strings.Contains(d, "  namespace: kdh-g") || !strings.Contains(d, homeManagedLabel+`: "true"`)) {
			t.Fatalf("rendered object without its namespace or the component's label:\n%s", d)
		}
	}
}

func docs(s string) []string {
	var out []string
	for _, d := range strings.Split(s, "---\n") {
		if strings.TrimSpace(d) != "" {
			out = append(out, d)
		}
	}
	return out
}

func TestHomeOpsUnitsInDependencyOrder(t *testing.T) {
	us := newHomeLayout("kdh").Units()
	seen := map[string]int{}
	perLevel := map[int]int{}
	for _, u := range us {
		if u.DependsOn != "" && seen[u.DependsOn] != u.Level-1 {
			t.Errorf("unit %s of level %d depends on %q (level %d), want a unit of level %d listed before it",
				u.Name, u.Level, u.DependsOn, seen[u.DependsOn], u.Level-1)
		}
		seen[u.Name] = u.Level
		perLevel[u.Level]++
	}
	if perLevel[1] != 1 || perLevel[2] != homeGroups || perLevel[3] != homeGroups*(homeAppsPerGroup-1) {
		t.Errorf("units per level %v, want 1, %d, %d", perLevel, homeGroups, homeGroups*(homeAppsPerGroup-1))
	}
}

func TestMarkdownShowsHomeOps(t *testing.T) {
	r := &report{Versions: map[string]string{}}
	r.Home = &homeResult{
		First:       measurement{Wall: 30 * time.Second, CPU: 12 * time.Second, MaxRSS: 200 << 20},
		Noop:        measurement{Wall: 3 * time.Second, Requests: &kube.RequestCount{Total: 500, ByMethod: map[string]int{"GET": 500}}},
		SingleFirst: measurement{Wall: 20 * time.Second},
		SingleNoop:  measurement{Wall: 500 * time.Millisecond},
		FirstBuilds: 101, NoopBuilds: 1,
		FirstRenders: 101, NoopRenders: 1,
		NoopUnits: []unitTime{
			{Name: "kdh-cluster-apps", Level: 1, Start: 1500 * time.Millisecond, Took: 200 * time.Millisecond, Ready: true},
			{Name: "kdh-g00-a00", Level: 2, Start: 1700 * time.Millisecond, Took: 300 * time.Millisecond, Ready: true},
		},
	}
	md := r.Markdown()
	for _, want := range []string{
		"## Home-ops layout: 100 Kustomizations found by building",
		"| `--config`, first deploy of 1 root + 100 apps | 30.0 s | 12.0 s | 200 MB | – |",
		"| `--config`, no-op of 1 root + 100 apps | 3.0 s | – | – | 500 (GET 500) |",
		"| the 3,010 objects as one unit (`--path`), no-op | 0.5 s | – | – | – |",
		"| no-op | 2 | 1 | 1.7–1.7 | 0.3–0.3 | 2.0 | 0 |",
		"The no-op took 3.0 s: its units ran for 0.5 s (first start to last end); the other 2.5 s are before and after them",
		"| home-ops, first deploy ÷ one unit's first deploy | 1.50× (30.0 s vs 20.0 s) | – |",
		"| home-ops, no-op ÷ one unit's no-op | 6.00× (3.0 s vs 0.5 s) | – |",
		"| home-ops, no-op of 100 Kustomizations found by building ≤ 1.0 s, each unit built and rendered at most once | 3.0 s; builds: 1 (no-op), 101 (first deploy); renders: 1 (no-op), 101 (first deploy), none twice; for 101 units | no |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// The target is in the targets table too.
	if strings.Count(md, "rendered at most once | 3.0 s; builds: 1 (no-op), 101 (first deploy); renders: 1 (no-op), 101 (first deploy), none twice; for 101 units | no |") != 2 {
		t.Errorf("the no-op target is not in both tables:\n%s", md)
	}

	r.Home.Noop.Err = io.ErrUnexpectedEOF
	if md := r.Markdown(); !strings.Contains(md, "≤ 1.0 s, each unit built and rendered at most once | not measured | – |") || !strings.Contains(md, "no-op ÷ one unit's no-op | not measured") {
		t.Errorf("a failed no-op is measured:\n%s", md)
	}
}

func TestHomeOpsFlag(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.homeOps {
		t.Error("the home-ops scenario is off by default")
	}
	if c, err = parseFlags([]string{"--homeops=false"}, io.Discard); err != nil || c.homeOps {
		t.Errorf("--homeops=false: homeOps %t, error %v", c.homeOps, err)
	}
}

func TestSingleTimeFromJSON(t *testing.T) {
	out := `{"unit": "kdh1-all", "mode": "apply", "ready": true, "duration": "1.5s", "counts": {"unchanged": 3010}}`
	times, err := singleTime([]byte(out), "kdh1-all")
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 1 || times[0].Took != 1500*time.Millisecond || !times[0].Ready || times[0].Counts.Unchanged != 3010 || len(changedUnits(times)) != 0 {
		t.Errorf("times %+v", times)
	}
	if _, err := singleTime([]byte(out), "kdh-all"); err == nil {
		t.Error("another unit's result was accepted")
	}
	if _, err := singleTime([]byte(`{"units": []}`), "kdh1-all"); err == nil {
		t.Error("a result without the unit was accepted")
	}
}
