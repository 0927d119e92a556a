package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// The PR-review rows check what they measure: a run that diffed more
// units, failed one, or changed another than the app does not count.
func TestCheckReview(t *testing.T) {
	t.Parallel()
	app := &result.Result{Unit: "app", Ready: true, Reason: result.ReasonOfflineDiffSucceed, Counts: result.Counts{Configured: 1, Unchanged: 29}}
	other := &result.Result{Unit: "other", Ready: true, Reason: result.ReasonOfflineDiffSucceed, Counts: result.Counts{Unchanged: 30}}
	changed := &result.Result{Unit: "other", Ready: true, Reason: result.ReasonOfflineDiffSucceed, Counts: result.Counts{Created: 1}}
	reach := &result.Reach{Rendered: 1, Units: 2, NotAffected: 1, NotAffectedUnits: []string{"other"}}
	cases := []struct {
		name string
		set  result.Set
		all  bool
		err  string
	}{
		{"every unit, the app changed", result.Set{Units: []*result.Result{app, other}}, true, ""},
		{"every unit, another changed", result.Set{Units: []*result.Result{app, changed}}, true, "unit other changed"},
		{"every unit, one missing", result.Set{Units: []*result.Result{app}}, true, "1 units diffed, want 2"},
		{"what it reaches", result.Set{Units: []*result.Result{app}, Reach: reach}, false, ""},
		{"what it reaches, without saying so", result.Set{Units: []*result.Result{app}}, false, "want 1"},
		{"what it reaches, two units", result.Set{Units: []*result.Result{app, other}, Reach: reach}, false, "want 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data, err := json.Marshal(tc.set)
			if err != nil {
				t.Fatal(err)
			}
			rev := &reviewResult{}
			err = checkReview(data, "app", tc.all, 2, rev)
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
			if tc.err == "" && !tc.all && (rev.Rendered != 1 || rev.Units != 2) {
				t.Errorf("rendered %d of %d", rev.Rendered, rev.Units)
			}
		})
	}
}
