package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

func TestWorkloadSizesAndChanges(t *testing.T) {
	w := newWorkload("bench-x-1000", 1000)
	if w.Size() != 1000 || w.Workloads != 10 || w.ConfigMaps != 969 {
		t.Fatalf("size %d, workloads %d, ConfigMaps %d; want 1000, 10, 969", w.Size(), w.Workloads, w.ConfigMaps)
	}
	if got := w.ChangeTenth(); got != 100 {
		t.Errorf("ChangeTenth changed %d objects, want 100", got)
	}
	if got := w.PruneTenth(); got != 100 || w.Size() != 900 {
		t.Errorf("PruneTenth removed %d objects leaving %d, want 100 leaving 900", got, w.Size())
	}
	dir := t.TempDir()
	if err := w.Write(dir); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 900 {
		t.Errorf("%d files written, want one per object (900)", len(files))
	}
	dep, err := os.ReadFile(filepath.Join(dir, "deployment-00000.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dep), `revision: "1"`) || !strings.Contains(string(dep), suiteLabel+": bench-x-1000") {
		t.Errorf("deployment-00000.yaml lacks the changed revision or the suite label:\n%s", dep)
	}
}

func TestStampWriterNotesPhases(t *testing.T) {
	var out bytes.Buffer
	w := &stampWriter{w: &out, start: time.Now()}
	for _, chunk := range []string{"building /x\nvalida", "ting 3 object(s) with a server-side dry-run\n", "  created ConfigMap/a/b\n"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(strings.Split(strings.TrimSpace(out.String()), "\n")); got != 3 {
		t.Errorf("%d lines written, want 3:\n%s", got, out.String())
	}
	var names []string
	for _, p := range w.phases {
		names = append(names, p.Name)
	}
	// A marker split across writes is not recognised; the pipeline writes
	// whole lines, so that is enough.
	if strings.Join(names, ",") != "build" {
		t.Errorf("phases %v, want [build]", names)
	}
}

func TestPhaseDurations(t *testing.T) {
	m := measurement{Wall: 10 * time.Second, Phases: []phase{{"build", time.Second}, {"validate", 3 * time.Second}, {"wait", 9 * time.Second}}}
	d := phaseDurations(m)
	want := map[string]time.Duration{"start": time.Second, "build": 2 * time.Second, "validate": 6 * time.Second, "wait": time.Second}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s lasted %s, want %s", k, d[k], v)
		}
	}
}

func TestMarkdownShowsRatiosAndTargets(t *testing.T) {
	r := &report{Sizes: []int{1000}, Tools: []string{toolKubectl, toolKapp, toolOurs}, Versions: map[string]string{}, Started: time.Now(), Finished: time.Now()}
	r.add(1000, "first", toolKapp, measurement{Wall: 4 * time.Second})
	r.add(1000, "first", toolKubectl, measurement{Wall: 8 * time.Second})
	r.add(1000, "first", toolOurs, measurement{Wall: 2 * time.Second, MaxRSS: 90 << 20,
		Requests: &kube.RequestCount{Total: 3, ByMethod: map[string]int{"GET": 2, "PATCH": 1}}})
	md := r.Markdown()
	for _, want := range []string{
		"| first deploy | 8.0 s | 4.0 s | 2.0 s | 0.25× | 0.50× | 90 MB | 3 (GET 2, PATCH 1) |",
		"| first deploy of 1,000 ≤ 0.5× kapp | 0.50× (2.0 s vs 4.0 s) | yes |",
		"| no-op re-run of 1,000 ≤ 0.3× kapp | not measured | – |",
		// The Helm scenario's targets are listed, unmeasured, when it did not run.
		"| rendering a chart of 300 objects ≤ 1.0× helm template (warm caches, medians) | not measured | – |",
		"| first deploy of the example layout (3 charts) ≤ 0.5× helm upgrade --install one after another | not measured | – |",
		"| no-op of 10 HelmReleases (`--config`, warm chart cache) ≤ 1.0 s | not measured | – |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestMarkdownReportsGrowthPerSpan(t *testing.T) {
	r := &report{Sizes: []int{100, 1000, 5000}, Tools: []string{toolOurs}, Versions: map[string]string{}}
	r.add(100, "noop", toolOurs, measurement{Wall: time.Second})
	r.add(1000, "noop", toolOurs, measurement{Wall: 20 * time.Second})
	// At 5,000, 50 of the 100 s are spent waiting: our own work grew 50×.
	r.add(5000, "noop", toolOurs, measurement{Wall: 100 * time.Second, Phases: []phase{{"build", time.Second}, {"wait", 50 * time.Second}}})
	md := r.Markdown()
	for _, want := range []string{
		"| linear growth 100→5000 (time per object at 5000 ÷ at 100; ≤ 1.25 counts as linear) | noop 2.00 | no |",
		"| linear growth 100→1000 (time per object at 1000 ÷ at 100; ≤ 1.25 counts as linear) | noop 2.00 | no |",
		"| linear growth 1000→5000 (time per object at 5000 ÷ at 1000; ≤ 1.25 counts as linear) | noop 1.00 | yes |",
		"| linear growth, readiness wait left out, 100→5000 (time per object at 5000 ÷ at 100; ≤ 1.25 counts as linear) | noop 1.00 | yes |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
