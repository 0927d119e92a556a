package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The render scenario's layout: the home-ops layout with a HelmRelease
// in renderReleases apps, and one peer command per unit and per release.
func TestRenderLayout(t *testing.T) {
	l := newRenderLayout()
	root := filepath.Join(t.TempDir(), "repo")
	config, cmds, err := l.Write(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if config != filepath.Join(root, homeConfigDir) {
		t.Errorf("configuration %s", config)
	}
	count := map[string]int{}
	for _, c := range cmds {
		count[c.tool]++
	}
	if count["kustomize"] != l.Apps()+1 || count["helm"] != renderReleases {
		t.Errorf("peer commands %v, want %d kustomize build and %d helm template", count, l.Apps()+1, renderReleases)
	}
	if len(l.releaseApps()) != renderReleases {
		t.Fatalf("%d apps hold a release", len(l.releaseApps()))
	}
	seen := map[[2]int]bool{}
	for _, ga := range l.releaseApps() {
		if seen[ga] {
			t.Errorf("app %v holds two releases", ga)
		}
		seen[ga] = true
		dir := filepath.Join(root, "kubernetes/apps", l.Namespace(ga[0]), l.App(ga[0], ga[1]), "app")
		k, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil || !strings.Contains(string(k), "release.yaml") {
			t.Errorf("%s: kustomization %q, %v", dir, k, err)
		}
		rel, err := os.ReadFile(filepath.Join(dir, "release.yaml"))
		if err != nil || !strings.Contains(string(rel), "chart: ./"+renderChartDir) {
			t.Errorf("%s: release %q, %v", dir, rel, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, renderChartDir, "Chart.yaml")); err != nil {
		t.Error(err)
	}
}
