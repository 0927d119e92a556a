package pipeline

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/hooks"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A release of another identity or cluster is applied whole, its own
// definitions included, after the unit's objects of its dependsOn level
// (the account and the rights the unit gives it exist by then), its pre
// hooks just before it, and before the next level; a release of the
// unit's identity goes with the unit's objects, its definitions in the
// unit's first stage, its pre hooks before the wave.
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
	f.applier.log, f.hooks.log = log, log
	r := newRun(DefaultOptions(), result.ModeApply)
	r.cl = cluster{applier: f.applier, waiter: f.waiter, hooks: f.hooks}
	migrate := func(name string) releaseHooks {
		return releaseHooks{release: hooks.Release{Name: "HelmRelease/team-a/" + name,
			Hooks: []helm.Hook{{Object: obj("batch/v1", "Job", "team-a", name+"-migrate"), Events: []string{helm.PreInstall}}}}}
	}
	if _, err := r.executeStages(t.Context(), &plan{desired: d, dryRun: dr}, []releaseHooks{migrate("own"), migrate("dev")}, &execution{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"apply team-a",                       // the unit's definitions
		"pre-install HelmRelease/team-a/own", // the unit's release's hooks, before its wave
		"apply dev-team,own-web",             // the unit's resources at level 0
		"pre-install HelmRelease/team-a/dev", // then the release of another account: its hooks
		"apply widgets.example.com,dev-web",  // and its objects, whole
		"apply ",                             // the unit's resources at level 1: none
		"apply dev-api",                      // then level 1's release of another account
	}
	if diff := cmp.Diff(want, log.calls); diff != "" {
		t.Errorf("applies (-want +got):\n%s", diff)
	}
}

// A release whose account gets its rights from the same apply is
// retried while RBAC refuses it (the authorizer learns of a new binding a
// moment later), a few times; any other failure, or a release whose
// account had its rights already, counts at once.
func TestRetryGranted(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web",
		errors.New(`User "system:serviceaccount:team-a:dev-team" cannot patch resource "deployments" in API group "apps" in the namespace "team-a"`))
	for _, tc := range []struct {
		name    string
		granted bool
		fails   int
		err     error
		calls   int
		ok      bool
	}{
		{name: "granted, refused twice", granted: true, fails: 2, err: forbidden, calls: 3, ok: true},
		{name: "not granted", fails: 2, err: forbidden, calls: 1},
		{name: "granted, another failure", granted: true, fails: 2, err: errBoom, calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			err := retryGranted(t.Context(), tc.granted, func() error {
				calls++
				if calls <= tc.fails {
					return fmt.Errorf("Deployment/team-a/web: %w", tc.err)
				}
				return nil
			})
			if calls != tc.calls || (err == nil) != tc.ok {
				t.Errorf("%d call(s), %v; want %d, ok %v", calls, err, tc.calls, tc.ok)
			}
		})
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
