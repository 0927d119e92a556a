package units

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/spec"
)

// An offline diff knows the CRDs of every unit of the configuration,
// also of those a run of some units (--name) leaves out: a typo in a
// custom resource fails its unit, and a kind no CRD defines is noted on
// its object.
func TestDiffOfflineKnowsTheConfigurationsCRDs(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join("..", "validate", "testdata", "crd-widget.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: small}\nspec: {size: 2, SIZE: 3}\n"
	gadget := "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: thing}\nspec: {anything: goes}\n"
	root := repo(t, map[string]string{
		"clusters/prod/crds.yaml": kustomization("crds", "./crds"),
		"clusters/prod/apps.yaml": kustomization("apps", "./apps", "crds"),
		"crds/widgets.yaml":       string(crd),
		"apps/widget.yaml":        widget,
		"apps/gadget.yaml":        gadget,
	})
	for _, only := range [][]string{nil, {"apps"}} {
		run, err := Open(t.Context(), Spec{Path: filepath.Join(root, "clusters/prod"), Root: root, Unit: spec.Default(), Cluster: offline, Only: only})
		if err != nil {
			t.Fatal(err)
		}
		set := run.DiffOffline(t.Context())
		apps := unitsOf(set)["apps"]
		if apps == nil || apps.Reason != result.ReasonValidationFailed || !strings.Contains(apps.Message, "Widget/small (apps/widget.yaml): spec.SIZE: unknown field") {
			t.Errorf("only %q: apps %+v", only, apps)
		}
		if apps != nil && strings.Contains(apps.Message, "Gadget") {
			t.Errorf("only %q: the Gadget, of no schema, failed: %s", only, apps.Message)
		}
	}

	if err := os.WriteFile(filepath.Join(root, "apps", "widget.yaml"), []byte(strings.Replace(widget, ", SIZE: 3", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := Open(t.Context(), Spec{Path: filepath.Join(root, "clusters/prod"), Root: root, Unit: spec.Default(), Cluster: offline, Only: []string{"apps"}})
	if err != nil {
		t.Fatal(err)
	}
	apps := unitsOf(run.DiffOffline(t.Context()))["apps"]
	if apps == nil || apps.Reason != result.ReasonOfflineDiffSucceed {
		t.Fatalf("apps %+v", apps)
	}
	notes := map[string]string{}
	for _, e := range apps.Entries {
		notes[e.Object.Kind] = e.Reason
	}
	if notes["Widget"] != "" || notes["Gadget"] != "not validated: no schema for Gadget.example.com" {
		t.Errorf("entries' notes: %q", notes)
	}
}

func unitsOf(s *result.Set) map[string]*result.Result {
	m := map[string]*result.Result{}
	for _, r := range s.Units {
		m[r.Unit] = r
	}
	return m
}
