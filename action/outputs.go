package action

import (
	"encoding/json"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// maxResultOutput bounds the result output: GitHub allows a job's outputs
// 1 MB together, and a step's output larger than that fails the job.
const maxResultOutput = 512 << 10

// resultOutput is the result output of res (a *result.Result or a
// *result.Set): the JSON of --output json without the diffs, which stay
// in the diff file (diff-file); if that is still over maxResultOutput,
// without the entries too (entriesOmitted says how many; counts remain).
func resultOutput(res any) string {
	units := func(f func(*result.Result) *result.Result) any {
		switch v := res.(type) {
		case *result.Result:
			return f(v)
		case *result.Set:
			c := *v
			c.Units = make([]*result.Result, len(v.Units))
			for i, u := range v.Units {
				c.Units[i] = f(u)
			}
			return &c
		}
		return res
	}
	for _, shrink := range []func(*result.Result) *result.Result{withoutDiffs, withoutEntries} {
		data, err := json.Marshal(units(shrink))
		if err != nil {
			return "{}"
		}
		if len(data) <= maxResultOutput {
			return string(data)
		}
	}
	return "{}"
}

// withoutDiffs is a copy of r whose entries carry no diff.
func withoutDiffs(r *result.Result) *result.Result {
	c := *r
	c.Entries = make([]result.Entry, len(r.Entries))
	for i, e := range r.Entries {
		e.Diff, e.Change = "", ""
		c.Entries[i] = e
	}
	return &c
}

// withoutEntries is a copy of r with no entries, and how many there were.
func withoutEntries(r *result.Result) *result.Result {
	c := *r
	c.EntriesOmitted, c.Entries = len(r.Entries), []result.Entry{}
	return &c
}

// reasonNoResult is the reason output of a run that ended before any
// unit ran: an input it could not use, a cluster it could not reach (the
// error annotation says which).
const reasonNoResult = "Failed"

// reasonOutput is the reason output: the unit's reason, or of a
// configuration the first failed unit's, else the first unit's.
func reasonOutput(results []*result.Result) string {
	for _, r := range results {
		if r.Failed() {
			return string(r.Reason)
		}
	}
	if len(results) > 0 {
		return string(results[0].Reason)
	}
	return ""
}

// failedUnitsOutput is the failed-units output: the names of the units
// that failed, comma-separated; empty when none did.
func failedUnitsOutput(results []*result.Result) string {
	var names []string
	for _, r := range results {
		if r.Failed() {
			names = append(names, r.Unit)
		}
	}
	return strings.Join(names, ",")
}
