package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Which release a failure is of: the one whose hook or test failed, else
// those with an object that did not get ready or failed to apply; none
// for the unit's other objects or a release this run did not change.
func TestFailedReleases(t *testing.T) {
	t.Parallel()
	web := object.ID{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	db := object.ID{Group: "apps", Kind: "StatefulSet", Namespace: "shop", Name: "db"}
	plain := object.ID{Kind: "ConfigMap", Namespace: "shop", Name: "plain"}
	chart := func(name string, objs ...object.ID) helm.Chart {
		return helm.Chart{Release: helm.Reference{Kind: "HelmRelease", Namespace: "shop", Name: name}, Objects: objs}
	}
	changed := map[string]changedRelease{
		"HelmRelease/shop/web": {chart: chart("web", web), upgrade: true},
		"HelmRelease/shop/db":  {chart: chart("db", db)},
	}
	notReady := func(ids ...object.ID) error {
		e := &health.NotReadyError{}
		for _, id := range ids {
			e.Unready = append(e.Unready, health.Unready{Object: id})
		}
		return failure(result.ReasonHealthCheckFailed, e)
	}
	for _, tc := range []struct {
		name    string
		err     error
		entries []result.Entry
		want    []string
	}{
		{"a release's object not ready", notReady(web, plain), nil, []string{"web upgrade"}},
		{"both releases", notReady(db, web), nil, []string{"db install", "web upgrade"}},
		{"the unit's own object", notReady(plain), nil, nil},
		{"a failed test", failure(result.ReasonTestFailed, &releaseError{release: "HelmRelease/shop/web", test: true, err: errors.New("x")}), nil, []string{"web upgrade test"}},
		{"a hook of a release not changed", &releaseError{release: "HelmRelease/shop/other", err: errors.New("x")}, nil, nil},
		{"an object that failed to apply", errors.New("apply failed"), []result.Entry{{Object: db, Action: result.Failed}, {Object: web, Action: result.Configured}}, []string{"db install"}},
	} {
		r := &run{res: &result.Result{Entries: tc.entries}}
		var got []string
		for _, f := range r.failedReleases(changed, tc.err) {
			s := fmt.Sprintf("%s %s", f.chart.Release.Name, map[bool]string{true: "upgrade", false: "install"}[f.upgrade])
			if f.test {
				s += " test"
			}
			got = append(got, s)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: failed releases %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Which revision a rollback goes to, and what it refuses.
func TestRollbackTarget(t *testing.T) {
	t.Parallel()
	st := inventory.Status{LastAppliedRevision: "c", History: []inventory.Revision{
		{Revision: 4, SourceRevision: "a", Ready: true},
		{Revision: 5, SourceRevision: "b", Ready: false},
		{Revision: 6, SourceRevision: "", Ready: true},
		{Revision: 7, SourceRevision: "c", Ready: true},
	}}
	for _, tc := range []struct {
		to   int
		want int
		err  string
	}{
		{0, 4, ""},
		{5, 5, ""},
		{6, 0, "revision 6 recorded no commit"},
		{2, 0, "revision 2 is not in its history (revisions 4 to 7)"},
	} {
		rev, err := rollbackTarget(st, tc.to)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrNoRollback)):
			t.Errorf("--to %d: error %v, want %q", tc.to, err, tc.err)
		case tc.err == "" && (err != nil || rev.Revision != tc.want):
			t.Errorf("--to %d: revision %d, %v; want %d", tc.to, rev.Revision, err, tc.want)
		}
	}
	if _, err := rollbackTarget(inventory.Status{LastAppliedRevision: "c", History: st.History[3:]}, 0); !errors.Is(err, ErrNoRollback) {
		t.Errorf("no earlier ready revision: %v", err)
	}
}
