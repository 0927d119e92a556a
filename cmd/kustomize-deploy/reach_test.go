package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A pull request's diff against the cluster renders only the units its
// change reaches, says "1 of N units rendered", and gives that unit the
// diff a render of every unit (--all-units) gives it; every unit left out
// shows no change there.
func TestDiffAgainstTheClusterRendersOnlyWhatTheChangeReaches(t *testing.T) {
	c := newCLI(t)
	repo := fluxRepo(t, c.ns)
	cfg := filepath.Join(repo, "clusters/local")
	if o, s := c.runConfig("apply", "--config", cfg); o.code != exitOK || !s.Ready {
		t.Fatalf("apply --config: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	writeFile(t, filepath.Join(repo, "apps", "frontend", "configmap.yaml"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: frontend\ndata:\n  page: home.html\n")

	o, reached := c.runConfig("diff", "--config", cfg, "--base", "HEAD")
	if o.code != exitOK || reached.Reach == nil {
		t.Fatalf("diff --config --base: exit %d, reach %+v\n%s", o.code, reached.Reach, o.stderr)
	}
	_, every := c.runConfig("diff", "--config", cfg, "--base", "HEAD", "--all-units")
	if every.Reach != nil {
		t.Errorf("--all-units: reach %+v", every.Reach)
	}
	r := reached.Reach
	if r.Rendered != 1 || r.Units != len(every.Units) || r.NotAffected != len(every.Units)-1 || len(reached.Units) != 1 || reached.Units[0].Unit != "webapp-frontend" {
		t.Fatalf("reach %+v, units %d of %d", r, len(reached.Units), len(every.Units))
	}
	all := unitsByName(every)
	for name, res := range all {
		if name == "webapp-frontend" {
			mine := reached.Units[0]
			if diff := cmp.Diff(res.Entries, mine.Entries); diff != "" || res.Counts != mine.Counts || res.Counts.Configured != 1 {
				t.Errorf("webapp-frontend: entries (-every unit +reached):\n%s", diff)
			}
			continue
		}
		if res.Changed() || res.Failed() {
			t.Errorf("unit %s, not reached, changes when every unit is rendered: %+v %s", name, res.Counts, res.Message)
		}
	}
	text := c.run("diff", "--config", cfg, "--base", "HEAD")
	contains(t, "diff --config --base", text.stdout, "1 of "+strconv.Itoa(len(every.Units))+" units rendered: the change since ")
	if strings.Count(text.stdout, "== ") != 1 {
		t.Errorf("units listed:\n%s", text.stdout)
	}
}
