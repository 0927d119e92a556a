package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A release of another identity or cluster is applied whole, its own
// definitions included, after the unit's objects of its dependsOn level
// (the account and the rights the unit gives it exist by then), and
// before the next level; a release of the unit's identity goes with the
// unit's objects, its definitions in the unit's first stage.
func TestReleasesOfAnotherTargetApplyAfterTheUnit(t *testing.T) {
	ns := obj("v1", "Namespace", "", "team-a")
	account := obj("v1", "ServiceAccount", "team-a", "dev-team")
	own := obj("apps/v1", "Deployment", "team-a", "own-web")
	theirCRD := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com")
	theirs := obj("apps/v1", "Deployment", "team-a", "dev-web")
	later := obj("apps/v1", "Deployment", "team-a", "dev-api")
	objs := []*unstructured.Unstructured{ns, account, own, theirCRD, theirs, later}
	dev := target{Account: identity{Namespace: "team-a", Name: "dev-team"}}
	d := &desired{
		Rendered: &Rendered{Objects: objs, Sources: map[object.ID]string{}, Charts: []helm.Chart{
			{Release: helm.Reference{Kind: "HelmRelease", Namespace: "team-a", Name: "own"}, Objects: []object.ID{object.IDOf(own)}},
			{Release: helm.Reference{Kind: "HelmRelease", Namespace: "team-a", Name: "dev"}, Objects: []object.ID{object.IDOf(theirCRD), object.IDOf(theirs)}},
			{Release: helm.Reference{Kind: "HelmRelease", Namespace: "team-a", Name: "api"}, Objects: []object.ID{object.IDOf(later)}, Level: 1},
		}},
		targets: map[object.ID]target{object.IDOf(theirCRD): dev, object.IDOf(theirs): dev, object.IDOf(later): dev},
	}
	dr := &apply.Plan{}
	for _, u := range objs {
		dr.Steps = append(dr.Steps, apply.Step{Object: u, Entry: result.Entry{Object: object.IDOf(u), Stage: result.StageOf(u), Action: result.Created}})
	}
	log := &callLog{}
	f := newFixture(t, nil)
	f.applier.log = log
	r := newRun(DefaultOptions(), result.ModeApply)
	r.cl = cluster{applier: f.applier, waiter: f.waiter, hooks: f.hooks}
	if _, err := r.executeStages(t.Context(), &plan{desired: d, dryRun: dr}, nil, &execution{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"apply team-a",                      // the unit's definitions
		"apply dev-team,own-web",            // the unit's resources at level 0
		"apply widgets.example.com,dev-web", // then the release of another account, whole
		"apply ",                            // the unit's resources at level 1: none
		"apply dev-api",                     // then level 1's release of another account
	}
	if diff := cmp.Diff(want, log.calls); diff != "" {
		t.Errorf("applies (-want +got):\n%s", diff)
	}
}

// Prune deletes as each entry's target, a release's before the unit's
// (whose Namespace may hold them); what a run routes, from the inventory
// and then the build, decides the target of the rest.
func TestByTarget(t *testing.T) {
	dev := target{Account: identity{Namespace: "team-a", Name: "dev-team"}}
	spoke := target{Cluster: "spoke"}
	entries := []inventory.Entry{
		{ID: object.ID{Kind: "Namespace", Name: "team-a"}},
		onTarget(inventory.Entry{ID: object.ID{Kind: "Deployment", Namespace: "team-a", Name: "web"}}, dev),
		onTarget(inventory.Entry{ID: object.ID{Kind: "Deployment", Namespace: "team-a", Name: "web"}}, spoke),
		{ID: object.ID{Kind: "ConfigMap", Namespace: "team-a", Name: "settings"}},
		onTarget(inventory.Entry{ID: object.ID{Kind: "Service", Namespace: "team-a", Name: "web"}}, dev),
	}
	order, groups := byTarget(entries, entryTarget)
	if diff := cmp.Diff([]target{dev, spoke, {}}, order, cmp.AllowUnexported(target{}, identity{})); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if len(groups[dev]) != 2 || len(groups[spoke]) != 1 || len(groups[target{}]) != 2 {
		t.Errorf("groups %+v", groups)
	}

	rt := &router{of: map[object.ID]target{}, standIn: map[object.ID]bool{}, releases: map[string]target{}}
	web := object.ID{Kind: "Deployment", Namespace: "team-a", Name: "web"}
	rt.route(map[object.ID]target{web: spoke}, nil, nil, nil)
	rt.route(map[object.ID]target{web: dev}, map[object.ID]bool{web: false}, nil, nil)
	if got := rt.targetOf(web); got != dev {
		t.Errorf("routed to %+v, want the build's %+v", got, dev)
	}
	if rt.standInFor(web) != nil {
		t.Error("an object whose rights do not come with the apply stands in as the unit")
	}
}
