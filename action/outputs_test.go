package action

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// The result output leaves the diffs to the diff file, and stays under
// GitHub's limit however many entries a run has.
func TestResultOutputFitsGitHubsLimit(t *testing.T) {
	t.Parallel()
	unit := func(name string, n int, diff string) *result.Result {
		r := &result.Result{Unit: name, Reason: result.ReasonApplySucceed, Ready: true, Counts: result.Counts{Configured: n}}
		for i := range n {
			r.Entries = append(r.Entries, result.Entry{Object: object.ID{Kind: "ConfigMap", Namespace: "ns", Name: strings.Repeat("x", 40) + string(rune('a'+i%26))},
				Action: result.Configured, Diff: diff, Change: diff})
		}
		return r
	}
	small := unit("web", 3, "-a: 1\n+a: 2\n")
	var got result.Result
	if err := json.Unmarshal([]byte(resultOutput(small)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != 3 || got.Entries[0].Diff != "" || got.Entries[0].Change != "" || got.EntriesOmitted != 0 {
		t.Errorf("a small result: %+v", got)
	}
	if small.Entries[0].Diff == "" {
		t.Error("the output's copy changed the result itself")
	}

	big := &result.Set{Units: []*result.Result{unit("a", 5000, ""), unit("b", 5000, ""), small}}
	out := resultOutput(big)
	if len(out) > maxResultOutput {
		t.Fatalf("the output of 10,003 entries is %d bytes, over %d", len(out), maxResultOutput)
	}
	var set result.Set
	if err := json.Unmarshal([]byte(out), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Units) != 3 || set.Units[0].EntriesOmitted != 5000 || len(set.Units[0].Entries) != 0 || set.Units[0].Counts.Configured != 5000 {
		t.Errorf("a set too big for the output: %d units, first %+v", len(set.Units), set.Units[0].Counts)
	}
}

func TestReasonAndFailedUnitsOutputs(t *testing.T) {
	t.Parallel()
	ok := &result.Result{Unit: "a", Ready: true, Reason: result.ReasonApplySucceed}
	failed := &result.Result{Unit: "b", Reason: result.ReasonBuildFailed}
	failed2 := &result.Result{Unit: "c", Reason: result.ReasonHealthCheckFailed}
	suspended := &result.Result{Unit: "d", Reason: result.ReasonSuspended}
	for _, tc := range []struct {
		name           string
		results        []*result.Result
		reason, failed string
	}{
		{"one unit", []*result.Result{ok}, "ApplySucceed", ""},
		{"one failed", []*result.Result{failed}, "BuildFailed", "b"},
		{"a configuration", []*result.Result{ok, failed, failed2, suspended}, "BuildFailed", "b,c"},
		{"nothing", nil, "", ""},
	} {
		if r, f := reasonOutput(tc.results), failedUnitsOutput(tc.results); r != tc.reason || f != tc.failed {
			t.Errorf("%s: reason %q failed-units %q, want %q %q", tc.name, r, f, tc.reason, tc.failed)
		}
	}
}
