package units

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
)

// Units that could not be built for the same cause (a Secret every app
// substitutes from, missing from the cluster) are one warning with their
// count, not one each before the error that matters; a cause of one unit
// names it and where it is defined.
func TestUndiscoveredWarningsOnePerCause(t *testing.T) {
	t.Parallel()
	set := &config.Set{}
	undiscovered := map[config.Ref]error{}
	missing := errors.New("postBuild.substituteFrom Secret flux-system/cluster-secrets: neither in the configuration's files nor in the cluster (mark it optional if it may be missing)")
	for i := range 13 {
		u := &config.Unit{Name: fmt.Sprintf("app-%d", i), Ref: config.Ref{Namespace: "flux-system", Name: fmt.Sprintf("app-%d", i)}, File: "apps/ks.yaml", Line: i + 1}
		set.Units = append(set.Units, u)
		undiscovered[u.Ref] = &discoverError{err: missing}
	}
	odd := &config.Unit{Name: "odd", Ref: config.Ref{Namespace: "flux-system", Name: "odd"}, File: "odd/ks.yaml", Line: 3}
	fine := &config.Unit{Name: "fine", Ref: config.Ref{Namespace: "flux-system", Name: "fine"}, File: "fine/ks.yaml", Line: 1}
	set.Units = append(set.Units, odd, fine)
	undiscovered[odd.Ref] = &discoverError{err: errors.New("GitRepository flux-system/other is not mapped")}
	got := undiscoveredWarnings(set, undiscovered)
	want := []string{
		"13 units (app-0, app-1, app-2 and 10 more) could not be built to find the Flux Kustomizations they apply: " + missing.Error() + "; the Kustomizations they may apply are not run, and no unit that left the configuration is garbage-collected",
		"unit odd (odd/ks.yaml:3): building it to find the Flux Kustomizations it applies: GitRepository flux-system/other is not mapped; the Kustomizations it may apply are not run, and no unit that left the configuration is garbage-collected",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings mismatch (-want +got):\n%s", diff)
	}
	if strings.Contains(strings.Join(got, "\n"), "fine") {
		t.Error("a unit that was built is warned about")
	}
}
