package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A run's result entries are what its steps returned, in step order:
// validate's (the untouched objects; after a failed dry-run, what it
// says), the apply's (or, in a diff, the dry-run's plan), then prune's. A
// failing step's entries are on the result it fails with.
func TestResultEntriesFollowTheSteps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   result.Mode
		setup  func(f *fixture, o *Options)
		reason result.Reason
		want   []string
	}{
		{name: "apply: validate's untouched, the apply's, prune's", mode: result.ModeApply,
			reason: result.ReasonApplySucceed,
			want:   []string{"unchanged ConfigMap/apps/a", "created ConfigMap/apps/c", "deleted ConfigMap/apps/b"}},
		{name: "apply, a delete fails: prune's entries are on the failure", mode: result.ModeApply,
			setup:  func(f *fixture, _ *Options) { f.pruner.fail = map[object.ID]bool{object.IDOf(cmB): true} },
			reason: result.ReasonPruneFailed,
			want:   []string{"unchanged ConfigMap/apps/a", "created ConfigMap/apps/c", "failed ConfigMap/apps/b"}},
		{name: "apply, the dry-run fails: what failed it, nothing else", mode: result.ModeApply,
			setup:  func(f *fixture, _ *Options) { f.applier.dryRunErr = errBoom },
			reason: result.ReasonValidationFailed,
			want:   []string{"failed ConfigMap/apps/c"}},
		{name: "apply, the build fails: no entries", mode: result.ModeApply,
			setup:  func(f *fixture, _ *Options) { f.renderErr = errBoom },
			reason: result.ReasonBuildFailed,
			want:   []string{}},
		{name: "diff: validate's untouched, the dry-run's plan, prune's", mode: result.ModeDiff,
			reason: result.ReasonDiffSucceed,
			want:   []string{"unchanged ConfigMap/apps/a", "created ConfigMap/apps/c", "deleted ConfigMap/apps/b"}},
		{name: "diff, the dry-run fails: the whole predicted plan", mode: result.ModeDiff,
			setup:  func(f *fixture, _ *Options) { f.applier.dryRunErr = errBoom },
			reason: result.ReasonValidationFailed,
			want:   []string{"unchanged ConfigMap/apps/a", "failed ConfigMap/apps/c"}},
		{name: "delete: prune's", mode: result.ModeDelete,
			reason: result.ReasonDeleteSucceed,
			want:   []string{"deleted ConfigMap/apps/a", "deleted ConfigMap/apps/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// a is untouched since the last run, b left the build, c is new.
			f := newFixture(t, lastRunUntouched(cmA, cmB), cmA, cmC)
			f.applier.unmoved = map[object.ID]string{object.IDOf(cmA): "rv-a"}
			opts := DefaultOptions()
			if tc.setup != nil {
				tc.setup(f, &opts)
			}
			res, _ := f.run(tc.mode, opts)
			if res.Reason != tc.reason {
				t.Fatalf("reason %s (%s), want %s", res.Reason, res.Message, tc.reason)
			}
			if diff := cmp.Diff(tc.want, actions(res.Entries)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

// A unit whose build would read what the last successful apply's read,
// with every object untouched since, reuses that apply: its entries are
// the inventory's objects, unchanged, and nothing is built.
func TestReusedApplyReportsTheInventory(t *testing.T) {
	for _, mode := range []result.Mode{result.ModeApply, result.ModeDiff} {
		last := lastRunUntouched(cmA, cmB)
		last.Inputs = reusableInputs(t)
		f := newFixture(t, last, cmA, cmB)
		f.applier.unmoved = map[object.ID]string{object.IDOf(cmA): "rv-a", object.IDOf(cmB): "rv-b"}
		res, err := f.run(mode, DefaultOptions())
		if err != nil || f.rendered != 0 {
			t.Fatalf("%s: err %v, built %d times", mode, err, f.rendered)
		}
		if diff := cmp.Diff([]string{"unchanged ConfigMap/apps/a", "unchanged ConfigMap/apps/b"}, actions(res.Entries)); diff != "" {
			t.Errorf("%s: entries (-want +got):\n%s", mode, diff)
		}
	}
}

// lastRunUntouched is lastRun with each object's digest and the
// resourceVersion rv-<name> recorded, as an apply of unit web leaves them.
func lastRunUntouched(objs ...*unstructured.Unstructured) *inventory.Inventory {
	inv := lastRun()
	for _, u := range objs {
		e := inventoryEntries([]*unstructured.Unstructured{withOwner(u)})[0]
		e.ResourceVersion = "rv-" + u.GetName()
		inv.Entries = append(inv.Entries, e)
	}
	return inv
}

// reusableInputs are the inputs a fixture's build of the default options
// records: a kustomization.yaml that is missing wherever the run looks.
func reusableInputs(t *testing.T) *inventory.Inputs {
	t.Helper()
	r := newRun(DefaultOptions(), result.ModeApply)
	r.opts.Dir.Rel, r.objNS = ".", "apps"
	in := build.Inputs{Files: []string{"kustomization.yaml"}}
	d, err := r.inputsDigest(in, substitutions{})
	if err != nil {
		t.Fatal(err)
	}
	return &inventory.Inputs{Digest: d, Files: in.Files}
}

// actions are entries as "<action> <object>", in order.
func actions(entries []result.Entry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, string(e.Action)+" "+e.Object.String())
	}
	return out
}
