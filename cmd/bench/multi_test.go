package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/units"
)

func TestDAGHasThreeLevels(t *testing.T) {
	us := dag("kd")
	if len(us) != multiUnits {
		t.Fatalf("%d units, want %d", len(us), multiUnits)
	}
	perLevel := map[int]int{}
	level := map[string]int{}
	dependents := map[string]int{}
	for _, u := range us {
		if !strings.HasPrefix(u.Name, "kd-u") {
			t.Errorf("unit %s lacks the prefix kd-u", u.Name)
		}
		if level[u.Name] != 0 {
			t.Errorf("unit %s appears twice", u.Name)
		}
		perLevel[u.Level]++
		switch {
		case u.Level == 1 && u.DependsOn != "":
			t.Errorf("unit %s of level 1 depends on %s", u.Name, u.DependsOn)
		case u.Level > 1 && level[u.DependsOn] != u.Level-1:
			// Also catches a dependency listed after its dependent.
			t.Errorf("unit %s of level %d depends on %q of level %d, want a unit of level %d listed before it",
				u.Name, u.Level, u.DependsOn, level[u.DependsOn], u.Level-1)
		}
		level[u.Name] = u.Level
		if u.DependsOn != "" {
			dependents[u.DependsOn]++
		}
	}
	if perLevel[1] != 4 || perLevel[2] != 8 || perLevel[3] != 8 {
		t.Errorf("units per level %v, want 4, 8, 8", perLevel)
	}
	// Spread evenly: no unit of level 1 carries the whole next level.
	for _, u := range us {
		if want := map[int]int{1: 2, 2: 1, 3: 0}[u.Level]; dependents[u.Name] != want {
			t.Errorf("unit %s of level %d has %d dependents, want %d", u.Name, u.Level, dependents[u.Name], want)
		}
	}
}

// The configuration is read by kustomize-deploy's own reader, so a field it
// refuses fails here rather than in the middle of a bench run.
func TestFluxRepoIsAConfiguration(t *testing.T) {
	root := t.TempDir()
	us := dag("kd")
	config, err := writeFluxRepo(root, us, true)
	if err != nil {
		t.Fatal(err)
	}
	set, dir, err := units.Load(config, root)
	if err != nil {
		t.Fatalf("units.Load: %v", err)
	}
	if dir.Rel != multiConfigDir {
		t.Errorf("configuration at %q, want %q", dir.Rel, multiConfigDir)
	}
	if len(set.Units) != len(us) {
		t.Fatalf("%d units, want %d", len(set.Units), len(us))
	}
	want := map[string]dagUnit{}
	for _, u := range us {
		want[u.Name] = u
	}
	for _, got := range set.Units {
		u, ok := want[got.Name]
		if !ok {
			t.Errorf("unexpected unit %s", got.Name)
			continue
		}
		if got.Path != "units/"+u.Name || !got.Prune || !got.Wait || got.Timeout != 5*time.Minute {
			t.Errorf("unit %s: path %q prune %t wait %t timeout %s; want units/%s, true, true, 5m",
				u.Name, got.Path, got.Prune, got.Wait, got.Timeout, u.Name)
		}
		var deps []string
		for _, d := range got.DependsOn {
			deps = append(deps, d.Name)
		}
		if strings.Join(deps, ",") != u.DependsOn {
			t.Errorf("unit %s depends on %v, want %q", u.Name, deps, u.DependsOn)
		}
		files, err := os.ReadDir(filepath.Join(root, got.Path))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != multiObjects {
			t.Errorf("unit %s has %d files, want one per object (%d)", u.Name, len(files), multiObjects)
		}
	}
}

func TestFluxRepoHonoursNoWait(t *testing.T) {
	if k := fluxKustomization(dagUnit{Name: "kd-u01", Level: 1}, false); !strings.Contains(k, "wait: false") || strings.Contains(k, "dependsOn") {
		t.Errorf("Kustomization of a level-1 unit without wait:\n%s", k)
	}
}

func TestFlatHoldsEveryUnitsObjects(t *testing.T) {
	dir := t.TempDir()
	if err := writeFlat(dir, dag("kd1")); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != multiUnits*multiObjects {
		t.Fatalf("%d files, want %d", len(files), multiUnits*multiObjects)
	}
	ns, err := os.ReadFile(filepath.Join(dir, "kd1-u20-namespace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ns), "name: kd1-u20") {
		t.Errorf("kd1-u20-namespace.yaml:\n%s", ns)
	}
}

func TestUnitTimesFromJSON(t *testing.T) {
	us := []dagUnit{{Name: "kd-u01", Level: 1}, {Name: "kd-u05", Level: 2, DependsOn: "kd-u01"}}
	out := `{"mode": "apply", "ready": true, "startedAt": "2026-01-02T03:04:05Z", "duration": "5s", "units": [
	  {"unit": "kd-u01", "ready": true, "startedAt": "2026-01-02T03:04:05.5Z", "duration": "2.25s", "counts": {"created": 50}},
	  {"unit": "kd-u05", "ready": false, "startedAt": "2026-01-02T03:04:08Z", "duration": "1s", "counts": {"unchanged": 50}}]}`
	times, err := unitTimes([]byte(out), us)
	if err != nil {
		t.Fatal(err)
	}
	want := []unitTime{
		{Name: "kd-u01", Level: 1, Start: 500 * time.Millisecond, Took: 2250 * time.Millisecond, Ready: true},
		{Name: "kd-u05", Level: 2, Start: 3 * time.Second, Took: time.Second},
	}
	want[0].Counts.Created = 50
	want[1].Counts.Unchanged = 50
	if len(times) != len(want) {
		t.Fatalf("%d units, want %d", len(times), len(want))
	}
	for i := range want {
		if times[i] != want[i] {
			t.Errorf("unit %d: %+v, want %+v", i, times[i], want[i])
		}
	}
	if got := changedUnits(times); len(got) != 1 || got[0] != "kd-u01" {
		t.Errorf("changed units %v, want [kd-u01]", got)
	}
	if _, err := unitTimes([]byte(out), append(us, dagUnit{Name: "kd-u13", Level: 3})); err == nil {
		t.Error("a result missing a unit was accepted")
	}
}

func TestMarkdownShowsManyUnitsAndTargets(t *testing.T) {
	r := &report{Sizes: []int{}, Tools: []string{toolKapp, toolOurs}, Versions: map[string]string{}}
	r.Multi = &multiResult{
		Kapp:    []measurement{{Wall: 2 * time.Second}, {Wall: 18 * time.Second}},
		KappSum: measurement{Wall: 20 * time.Second, MaxRSS: 70 << 20},
		Single:  measurement{Wall: 5 * time.Second, MaxRSS: 90 << 20},
		First: measurement{Wall: 6 * time.Second, MaxRSS: 100 << 20,
			Requests: &kube.RequestCount{Total: 400, ByMethod: map[string]int{"PATCH": 400}}},
		Noop: measurement{Wall: 1500 * time.Millisecond},
		FirstUnits: []unitTime{
			{Name: "kd-u01", Level: 1, Start: 0, Took: 2 * time.Second, Ready: true},
			{Name: "kd-u02", Level: 1, Start: 100 * time.Millisecond, Took: 3 * time.Second, Ready: true},
			{Name: "kd-u05", Level: 2, Start: 2 * time.Second, Took: time.Second},
		},
	}
	md := r.Markdown()
	for _, want := range []string{
		"## 20 units of 50 objects in a 3-level dependency graph",
		"| kapp, 2 units one after another (sum) | 20.0 s | 70 MB | – |",
		"| kustomize-deploy, the 1,000 objects as one unit | 5.0 s | 90 MB | – |",
		"| kustomize-deploy `--config`, first deploy of 20 units | 6.0 s | 100 MB | 400 (PATCH 400) |",
		"kapp took 2.0 s to 18.0 s per unit.",
		"| first deploy | 1 | 2 | 0.0–0.1 | 2.0–3.0 | 3.1 | 0 |",
		"| first deploy | 2 | 1 | 2.0–2.0 | 1.0–1.0 | 3.0 | 1 |",
		"| many units, first deploy ≤ 0.35× kapp's 20 deploys one after another | 0.30× (6.0 s vs 20.0 s) | yes |",
		"| many units, first deploy ≤ 1.3× one unit of the same 1,000 objects | 1.20× (6.0 s vs 5.0 s) | yes |",
		"| many units, no-op of all 20 ≤ 1.0 s | 1.5 s | no |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestMarkdownManyUnitsFailedIsNotMeasured(t *testing.T) {
	r := &report{Versions: map[string]string{}}
	r.Multi = &multiResult{
		KappSum: measurement{Wall: 20 * time.Second, Err: io.ErrUnexpectedEOF},
		Single:  measurement{Wall: 5 * time.Second},
		First:   measurement{Wall: 6 * time.Second},
	}
	md := r.Markdown()
	for _, want := range []string{
		"| kapp, 0 units one after another (sum) | failed (20.0 s) |",
		"| many units, first deploy ≤ 0.35× kapp's 20 deploys one after another | not measured | – |",
		"| many units, no-op of all 20 ≤ 1.0 s | not measured | – |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestMultiFlag(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.multi {
		t.Error("the many-unit scenario is off by default")
	}
	if c, err = parseFlags([]string{"--multi=false"}, io.Discard); err != nil || c.multi {
		t.Errorf("--multi=false: multi %t, error %v", c.multi, err)
	}
}
