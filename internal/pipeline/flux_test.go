package pipeline

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

func fluxObj(apiVersion, kind, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	u.SetNamespace("flux-system")
	u.SetLabels(labels)
	return u
}

// A unit of a configuration applies none of the Flux objects the
// configuration runs or reads, nor Flux's controllers (their Namespace
// excepted); a unit whose HelmReleases go to helm-controller applies its
// sources; a unit on its own (--path) applies everything.
func TestRunByConfiguration(t *testing.T) {
	flux := map[string]string{"app.kubernetes.io/part-of": "flux"}
	rendering := Options{RunFlux: true, Charts: &helm.Options{}}
	helmController := Options{RunFlux: true}
	controllers := Options{RunFlux: true, Charts: &helm.Options{}, FluxControllers: true}
	tests := []struct {
		obj  *unstructured.Unstructured
		opts Options
		want string // "" applied
	}{
		{fluxObj("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "apps", nil), rendering, "run as a unit"},
		{fluxObj("kustomize.toolkit.fluxcd.io/v1beta2", "Kustomization", "apps", nil), helmController, "run as a unit"},
		{fluxObj("kustomize.config.k8s.io/v1beta1", "Kustomization", "apps", nil), rendering, ""},
		{fluxObj("source.toolkit.fluxcd.io/v1", "GitRepository", "podinfo", nil), rendering, "Flux source"},
		{fluxObj("source.toolkit.fluxcd.io/v1", "GitRepository", "podinfo", nil), helmController, ""},
		{fluxObj("source.extensions.fluxcd.io/v1beta1", "ArtifactGenerator", "split", nil), rendering, "Flux source"},
		{fluxObj("apps/v1", "Deployment", "kustomize-controller", flux), rendering, "not installed"},
		{fluxObj("apps/v1", "Deployment", "kustomize-controller", flux), controllers, ""},
		{fluxObj("v1", "Namespace", "flux-system", flux), rendering, ""},
		{fluxObj("v1", "ConfigMap", "settings", nil), rendering, ""},
		{fluxObj("image.toolkit.fluxcd.io/v1beta2", "ImagePolicy", "podinfo", nil), rendering, "image automation"},
		{fluxObj("image.toolkit.fluxcd.io/v1", "ImageRepository", "podinfo", nil), helmController, "image automation"},
		{fluxObj("image.toolkit.fluxcd.io/v1beta2", "ImageUpdateAutomation", "flux-system", nil), rendering, "writes nothing back to Git"},
		{fluxObj("notification.toolkit.fluxcd.io/v1", "Receiver", "github", nil), rendering, "webhook into the cluster"},
		{fluxObj("notification.toolkit.fluxcd.io/v1beta3", "Provider", "slack", nil), rendering, "notification Provider or Alert"},
		{fluxObj("notification.toolkit.fluxcd.io/v1beta2", "Alert", "deploys", nil), helmController, "notification Provider or Alert"},
		{fluxObj("notification.toolkit.fluxcd.io/v1beta3", "Alert", "on-call", nil), rendering, "posts its units' events to it"},
		{fluxObj("fluxcd.controlplane.io/v1", "FluxInstance", "flux", nil), rendering, "stands in for the controllers it installs"},
		{fluxObj("fluxcd.controlplane.io/v1", "FluxReport", "flux", nil), rendering, "the operator writes it"},
		{fluxObj("fluxcd.controlplane.io/v1", "ResourceSet", "apps", nil), rendering, "expanded by this run"},
		{fluxObj("fluxcd.controlplane.io/v1", "ResourceSetInputProvider", "prs", nil), rendering, "read by this run for the ResourceSets naming it"},
		{fluxObj("example.com/v1", "ImagePolicy", "not-flux", nil), rendering, ""},
	}
	for _, tt := range tests {
		got := RunByConfiguration(tt.obj, tt.opts)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s %s (flux controllers %v, charts %v): %q, want %q", tt.obj.GetAPIVersion(), object.IDOf(tt.obj), tt.opts.FluxControllers, tt.opts.Charts != nil, got, tt.want)
		}
	}

	r := &Rendered{Objects: []*unstructured.Unstructured{tests[0].obj, tests[9].obj}, Sources: map[object.ID]string{}}
	leaveOutFlux(r, Options{Charts: &helm.Options{}})
	if len(r.Objects) != 2 {
		t.Errorf("a unit on its own left out %v", r.LeftOut)
	}
	leaveOutFlux(r, rendering)
	if len(r.Objects) != 1 || len(r.LeftOut) != 1 || r.LeftOut[0].ID != object.IDOf(tests[0].obj) {
		t.Errorf("objects %v, left out %v", r.Objects, r.LeftOut)
	}
}

// Entries of Flux Kustomizations, sources and notification objects an
// earlier run applied are orphaned, never pruned: a Kustomization deleted where kustomize-controller
// runs would delete everything it applied.
func TestFluxEntriesAreOrphanedNotPruned(t *testing.T) {
	entries := []inventory.Entry{
		{ID: object.IDOf(fluxObj("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "apps", nil))},
		{ID: object.IDOf(fluxObj("source.toolkit.fluxcd.io/v1", "OCIRepository", "podinfo", nil))},
		{ID: object.IDOf(fluxObj("v1", "ConfigMap", "settings", nil))},
		{ID: object.IDOf(fluxObj("notification.toolkit.fluxcd.io/v1beta3", "Alert", "on-call", nil))},
		{ID: object.IDOf(fluxObj("fluxcd.controlplane.io/v1", "ResourceSet", "tenants", nil))},
	}
	kept, orphaned := splitFlux(entries)
	if len(kept) != 1 || kept[0].ID.Kind != "ConfigMap" || len(orphaned) != 4 {
		t.Errorf("kept %v, orphaned %v", kept, orphaned)
	}
	r := newRun(Options{RunFlux: true}, "apply")
	if got := r.orphanFlux(entries); len(got) != 1 || len(r.res.Notes) != 1 || !strings.Contains(r.res.Notes[0], "not deleted") {
		t.Errorf("stale %v, notes %v", got, r.res.Notes)
	}
	// A unit on its own applies Flux's objects, but expands ResourceSets
	// (see expandResourceSets): only the ResourceSet is orphaned.
	r = newRun(Options{}, "apply")
	if got := r.orphanFlux(entries); len(got) != len(entries)-1 || slices.ContainsFunc(got, func(e inventory.Entry) bool { return e.ID.Kind == "ResourceSet" }) {
		t.Errorf("a unit on its own kept %v", got)
	}
}

// A dependency outside the run is enough once Ready, unless the run waits
// for it at its revision: then it must be Ready at that revision, or at
// one committed after it.
func TestDependencyPending(t *testing.T) {
	at := func(rev string, committed time.Time, ready string) *inventory.Inventory {
		return &inventory.Inventory{Status: inventory.Status{Ready: inventory.Condition{Status: ready, Reason: "ApplySucceed"}, LastAppliedRevision: rev, LastAppliedRevisionTime: &committed}}
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		inv        *inventory.Inventory
		rev        string
		atRevision bool
		want       string // "" ready to go on
	}{
		{"never deployed", nil, "b", true, "has no inventory"},
		{"not ready", at("b", now, "False"), "b", true, "is not ready"},
		{"ready, checked once", at("a", now.Add(-time.Hour), "True"), "b", false, ""},
		{"ready at an older revision", at("a", now.Add(-time.Hour), "True"), "b", true, "ready at revision a, not yet at b"},
		{"ready at this revision", at("b", now, "True"), "b", true, ""},
		{"ready at a newer revision", at("c", now.Add(time.Hour), "True"), "b", true, ""},
		{"no revision to compare", at("a", now, "True"), "", true, ""},
	}
	for _, tt := range tests {
		got := dependencyPending(tt.inv, "db", "ops", tt.rev, now, tt.atRevision)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
