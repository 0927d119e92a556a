package units

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/pipeline"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
)

// A source waits for its unit's turn only when the object its
// credentials are read from is missing and a unit it runs after creates
// it; anything else fails as the configuration opens.
func TestDeferTo(t *testing.T) {
	t.Parallel()
	missing := func(kind, ns, name string) error {
		m := &fetch.MissingError{Kind: kind, Namespace: ns, Name: name, Msg: kind + " " + name + " is missing"}
		// As the resolver wraps it, and a unit's failure wraps that.
		return &SourceError{Err: &source.Error{Why: "pulling: " + m.Error(), Err: fmt.Errorf("OCIRepository x: %w", m)}}
	}
	secret, account := missing("Secret", "team", "regcred"), missing("ServiceAccount", "team", "flux")
	// app depends on tenants, which the sync emitted; audit runs after app;
	// other is on its own.
	graph := map[string][]string{"app": {"tenants"}, "tenants": {"flux-system"}, "audit": {"app"}}
	for _, tc := range []struct {
		name    string
		err     error
		unit    string
		creates map[string][]string
		want    string // the creator, "" for no deferral
	}{
		{"a Secret its dependency creates", secret, "app", map[string][]string{"Secret team/regcred": {"tenants"}}, "tenants"},
		{"a ServiceAccount its dependency creates", account, "app", map[string][]string{"ServiceAccount team/flux": {"tenants"}}, "tenants"},
		{"created further up the chain", secret, "app", map[string][]string{"Secret team/regcred": {"flux-system"}}, "flux-system"},
		{"the nearest of two creators", secret, "app", map[string][]string{"Secret team/regcred": {"flux-system", "tenants"}}, "tenants"},
		{"created by nobody", secret, "app", map[string][]string{}, ""},
		{"created by a unit that runs after it", secret, "app", map[string][]string{"Secret team/regcred": {"audit"}}, ""},
		{"created by a unit it does not wait for", secret, "other", map[string][]string{"Secret team/regcred": {"tenants"}}, ""},
		{"created by the unit itself", secret, "app", map[string][]string{"Secret team/regcred": {"app"}}, ""},
		{"a Secret of the same name in another namespace", secret, "app", map[string][]string{"Secret other/regcred": {"tenants"}}, ""},
		{"a ServiceAccount where a Secret of its name is created", account, "app", map[string][]string{"Secret team/flux": {"tenants"}}, ""},
		{"another failure", &SourceError{Err: &source.Error{Why: "pulling: unauthorized"}}, "app", map[string][]string{"Secret team/regcred": {"tenants"}}, ""},
		{"no failure", nil, "app", map[string][]string{"Secret team/regcred": {"tenants"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, by := deferTo(tc.err, tc.unit, graph, tc.creates)
			if by != tc.want || (obj == nil) != (tc.want == "") {
				t.Errorf("deferTo = %v, %q; want %q", obj, by, tc.want)
			}
			var m *fetch.MissingError
			if obj != nil && (!errors.As(tc.err, &m) || obj != m) {
				t.Errorf("the missing object is not the error's: %v", obj)
			}
		})
	}
}

// A run that writes nothing never resolves a deferred source: the unit is
// skipped on purpose (SourceDeferred), naming the object and the unit
// that creates it, and so are the units that run after it, none failed.
// An apply resolves it at the unit's turn; what still fails fails the
// unit.
func TestRunDeferredSource(t *testing.T) {
	t.Parallel()
	missing := &fetch.MissingError{Kind: "ServiceAccount", Namespace: "team", Name: "flux", Msg: "ServiceAccount team/flux is not in the cluster"}
	cu := &config.Unit{Name: "app", Ref: config.Ref{Namespace: "team", Name: "app"}, File: "tenants/team.yaml", Line: 4,
		Source: config.SourceRef{Kind: "OCIRepository", Namespace: "team", Name: "app"}}
	units := func(resolve func(context.Context, pipeline.Options) (pipeline.Options, error)) []Unit {
		return []Unit{
			{Options: pipeline.Options{Name: "app", InventoryNamespace: "inv"}, Err: &DeferredError{Unit: cu, Source: cu.Source, Missing: missing, By: "tenants"}, resolve: resolve},
			{Options: pipeline.Options{Name: "audit", InventoryNamespace: "inv"}, DependsOn: []string{"app"}},
		}
	}
	called := 0
	never := func(ctx context.Context, o pipeline.Options) (pipeline.Options, error) {
		called++
		return o, errors.New("resolved in a run that writes nothing")
	}
	for _, mode := range []result.Mode{result.ModeDiff, result.ModeDrift} {
		set, err := runUnits(t.Context(), units(never), runOptions{Mode: mode})
		if err != nil || called != 0 || !set.Ready {
			t.Fatalf("%s: %v, resolved %d times, ready %v", mode, err, called, set.Ready)
		}
		app, audit := set.Units[0], set.Units[1]
		if app.Reason != result.ReasonSourceDeferred || app.Failed() || app.Message != "not built: spec.sourceRef OCIRepository/team/app reads its credentials from ServiceAccount team/flux, which unit tenants creates and this run does not apply: the source is resolved once tenants has been applied" {
			t.Errorf("%s: app %+v", mode, app)
		}
		if audit.Reason != result.ReasonSourceDeferred || audit.Failed() || !strings.Contains(audit.Message, "it runs after app, whose source is resolved only once") {
			t.Errorf("%s: audit %+v", mode, audit)
		}
	}
	failing := func(ctx context.Context, o pipeline.Options) (pipeline.Options, error) {
		called++
		return o, &SourceError{Unit: cu, Source: cu.Source, Why: "ServiceAccount team/flux is not in the cluster (resolved at this unit's turn)"}
	}
	set, err := runUnits(t.Context(), units(failing)[:1], runOptions{Mode: result.ModeApply})
	if err != nil || called != 1 {
		t.Fatalf("apply: %v, resolved %d times", err, called)
	}
	if app := set.Units[0]; app.Reason != result.ReasonArtifactFailed || !app.Failed() || !strings.Contains(app.Message, "(resolved at this unit's turn)") {
		t.Errorf("apply: app %+v", app)
	}
}
