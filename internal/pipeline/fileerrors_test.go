package pipeline

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// A failed build lands on the result with each file it names as its
// cause, for annotations; a failure naming none leaves none.
func TestBuildFailureCarriesFileErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want []result.FileError
	}{
		{name: "no file", err: errBoom},
		{name: "files of joined errors, wrapped or not",
			err: errors.Join(
				&build.FileError{File: "apps/web/kustomization.yaml", Line: 3, Err: errors.New("resources entry missing")},
				fmt.Errorf("substituting: %w", &build.FileError{File: "apps/web/cm.yaml", Err: errors.New("bad form")}),
			),
			want: []result.FileError{
				{File: "apps/web/kustomization.yaml", Line: 3, Message: "resources entry missing"},
				{File: "apps/web/cm.yaml", Message: "bad form"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, cmA)
			f.renderErr = tc.err
			res, err := f.run(result.ModeApply, DefaultOptions())
			if err == nil || res.Reason != result.ReasonBuildFailed {
				t.Fatalf("got %v, reason %s; want a BuildFailed", err, res.Reason)
			}
			if diff := cmp.Diff(tc.want, res.FileErrors); diff != "" {
				t.Errorf("file errors (-want +got):\n%s", diff)
			}
		})
	}
}
