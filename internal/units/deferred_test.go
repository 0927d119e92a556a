package units

import (
	"errors"
	"fmt"
	"testing"

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
