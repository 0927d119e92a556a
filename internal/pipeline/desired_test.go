package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// variables returns the substitutions the build takes: the unit's own
// values over those found at build time (substituteFrom), the secret ones
// named (unless the unit's own value wins) and masked at once. The run's
// options stay as the caller gave them.
func TestVariablesStep(t *testing.T) {
	found := func(vars map[string]string, secret ...string) func(context.Context) (map[string]string, []string, error) {
		return func(context.Context) (map[string]string, []string, error) { return vars, secret, nil }
	}
	for _, tc := range []struct {
		name       string
		own        map[string]string
		ownSecret  []string
		ownPublic  bool
		variables  func(context.Context) (map[string]string, []string, error)
		want       substitutions
		wantMasked []string
		wantReason result.Reason
	}{
		{name: "nothing found at build time: the unit's own",
			own: map[string]string{"ENV": "prod"}, ownSecret: []string{"ENV"},
			want: substitutions{values: map[string]string{"ENV": "prod"}, secret: []string{"ENV"}}},
		{name: "values found go under the unit's own",
			own: map[string]string{"ENV": "prod"}, ownPublic: true,
			variables: found(map[string]string{"ENV": "from-configmap", "REGION": "eu"}),
			want:      substitutions{values: map[string]string{"ENV": "prod", "REGION": "eu"}, public: true}},
		{name: "secret values are masked and named, unless the unit's own value wins",
			own: map[string]string{"PIN": "42", "LEVEL": "debug"}, ownSecret: []string{"PIN"}, ownPublic: true,
			variables:  found(map[string]string{"LEVEL": "overridden-secret", "TOKEN": "from-a-secret"}, "LEVEL", "TOKEN"),
			want:       substitutions{values: map[string]string{"PIN": "42", "LEVEL": "debug", "TOKEN": "from-a-secret"}, secret: []string{"PIN", "TOKEN"}},
			wantMasked: []string{"overridden-secret", "from-a-secret"}},
		{name: "nothing found, nothing of its own: no values",
			ownPublic: true, variables: found(nil),
			want: substitutions{values: map[string]string{}, public: true}},
		{name: "finding them fails: the build fails",
			variables: func(context.Context) (map[string]string, []string, error) {
				return nil, nil, errors.New("substituteFrom ConfigMap flux-system/cluster-vars: not found")
			},
			wantReason: result.ReasonBuildFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Substitute, opts.SubstituteSecret, opts.SubstitutePublic = tc.own, tc.ownSecret, tc.ownPublic
			opts.Variables = tc.variables
			var masked []string
			opts.Mask = func(v []string) { masked = append(masked, v...) }
			r := newRun(opts, result.ModeApply)

			got, err := r.variables(t.Context())
			var f *Failure
			if errors.As(err, &f) != (tc.wantReason != "") || f != nil && f.Reason != tc.wantReason {
				t.Fatalf("error %v, want reason %q", err, tc.wantReason)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(substitutions{})); diff != "" {
				t.Errorf("substitutions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMasked, masked); diff != "" {
				t.Errorf("masked (-want +got):\n%s", diff)
			}
			type subst struct {
				Values map[string]string
				Secret []string
				Public bool
			}
			given := subst{tc.own, tc.ownSecret, tc.ownPublic}
			if diff := cmp.Diff(given, subst{r.opts.Substitute, r.opts.SubstituteSecret, r.opts.SubstitutePublic}); diff != "" {
				t.Errorf("the run's options changed (-given +now):\n%s", diff)
			}
		})
	}
}
