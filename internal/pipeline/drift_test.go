package pipeline

import (
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

func TestDrift(t *testing.T) {
	for _, tc := range []struct {
		name      string
		unchanged bool // the cluster matches
		correct   bool
		drifted   bool
		applied   bool
		msg       string
	}{
		{name: "no drift", unchanged: true, correct: true, msg: "no drift: the cluster matches revision rev-2"},
		{name: "drift reported", drifted: true, msg: "drift: 0 to create, 0 to configure, 1 to delete (reported, not corrected)"},
		{name: "drift corrected", correct: true, drifted: true, applied: true, msg: "drift: 0 to create, 0 to configure, 1 to delete: corrected, applied revision rev-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, lastRun(cmA, cmB), cmA)
			if tc.unchanged {
				f.applier.unchanged = map[object.ID]bool{object.IDOf(cmA): true}
				f.store.invs["deploy/web"] = lastRun(cmA)
			} else {
				f.applier.unchanged = map[object.ID]bool{object.IDOf(cmA): true} // b left Git: prune would delete it
			}
			opts := DefaultOptions()
			res, err := drift(tc.correct,
				func() (*result.Result, error) { return f.run(result.ModeDiff, opts) },
				func() (*result.Result, error) { return f.run(result.ModeApply, opts) })
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode != result.ModeDrift || res.Drifted != tc.drifted || !strings.Contains(res.Message, tc.msg) {
				t.Errorf("mode %s drifted %v message %q; want drifted %v, %q", res.Mode, res.Drifted, res.Message, tc.drifted, tc.msg)
			}
			if res.AppliedRevision != "rev-1" {
				t.Errorf("applied revision %q, want the inventory's rev-1", res.AppliedRevision)
			}
			if applied := f.applier.executed != nil; applied != tc.applied {
				t.Errorf("applied %v, want %v", applied, tc.applied)
			}
		})
	}
}
