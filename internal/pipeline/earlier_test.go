package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// What a unit's dry-run plan would create that units after it need: new
// Namespaces, the kinds of new CRDs, new service accounts, and the
// accounts that new or changed role bindings name (a RoleBinding's
// subject without a namespace is of the binding's own). What exists, or
// is unchanged, is no prerequisite.
func TestPrerequisitesOfAPlan(t *testing.T) {
	t.Parallel()
	step := func(u *unstructured.Unstructured, a result.Action) apply.Step {
		return apply.Step{Object: u, Entry: result.Entry{Action: a}}
	}
	crd := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com")
	_ = unstructured.SetNestedField(crd.Object, "example.com", "spec", "group")
	_ = unstructured.SetNestedField(crd.Object, "Widget", "spec", "names", "kind")
	binding := func(kind, ns, name string, subjects ...any) *unstructured.Unstructured {
		u := obj("rbac.authorization.k8s.io/v1", kind, ns, name)
		_ = unstructured.SetNestedSlice(u.Object, subjects, "subjects")
		return u
	}
	sa := func(ns, name string) map[string]any {
		m := map[string]any{"kind": "ServiceAccount", "name": name}
		if ns != "" {
			m["namespace"] = ns
		}
		return m
	}
	p := &apply.Plan{Steps: []apply.Step{
		step(obj("v1", "Namespace", "", "msdemo"), result.Created),
		step(obj("v1", "Namespace", "", "old"), result.Unchanged),
		step(crd, result.Created),
		step(obj("v1", "ServiceAccount", "msdemo", "flux"), result.Created),
		step(obj("v1", "ServiceAccount", "msdemo", "there"), result.Configured),
		step(binding("RoleBinding", "msdemo", "flux", sa("", "flux"), map[string]any{"kind": "User", "name": "alice"}), result.Created),
		step(binding("ClusterRoleBinding", "", "ops", sa("ops", "deployer")), result.Configured),
		step(binding("RoleBinding", "kept", "same", sa("kept", "same")), result.Unchanged),
	}}
	want := Prerequisites{
		Namespaces: map[string]string{"msdemo": "sync"},
		Kinds:      map[schema.GroupKind]string{{Group: "example.com", Kind: "Widget"}: "sync"},
		Accounts:   map[string]string{"msdemo/flux": "sync"},
		Grants:     map[string]string{"msdemo/flux": "sync", "ops/deployer": "sync"},
	}
	if diff := cmp.Diff(want, prerequisites("sync", p)); diff != "" {
		t.Errorf("prerequisites mismatch (-want +got):\n%s", diff)
	}
}

// Whether a service account's rights can be checked in a diff: not while
// an earlier unit creates it or grants it rights; the first unit to say
// so is named.
func TestAccountUnready(t *testing.T) {
	t.Parallel()
	var ps Prerequisites
	ps.Add(Prerequisites{Accounts: map[string]string{"msdemo/flux": "sync"}, Grants: map[string]string{"msdemo/flux": "sync", "ops/deployer": "rbac"}})
	ps.Add(Prerequisites{Accounts: map[string]string{"msdemo/flux": "later"}})
	for _, tc := range []struct{ ns, name, want string }{
		{"msdemo", "flux", "ServiceAccount msdemo/flux does not exist yet: unit sync, run before this one, creates it"},
		{"ops", "deployer", "the rights of ServiceAccount ops/deployer are granted or changed by unit rbac, run before this one"},
		{"msdemo", "other", ""},
		{"msdemo", "", ""},
	} {
		if got := ps.unready(tc.ns, tc.name); got != tc.want {
			t.Errorf("%s/%s: %q, want %q", tc.ns, tc.name, got, tc.want)
		}
	}
	if got := (*Prerequisites)(nil).unready("msdemo", "flux"); got != "" {
		t.Errorf("nil: %q", got)
	}
}

type fakeAccounts struct {
	exists, known bool
	err           error
}

func (f fakeAccounts) Exists(context.Context, string, string) (bool, bool, error) {
	return f.exists, f.known, f.err
}

// A unit applying as a service account that does not exist fails before
// anything is sent as it, naming the account (and the unit that holds
// it, when known); an account the caller may not read, or that could not
// be read, lets the run go on, as does a diff run as the caller.
func TestCheckAccount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		accounts fakeAccounts
		by       string
		asCaller bool
		want     string // "" for no error
	}{
		{name: "exists", accounts: fakeAccounts{exists: true, known: true}},
		{name: "missing", accounts: fakeAccounts{known: true}, want: "ServiceAccount msdemo/flux does not exist: the unit applies as it (impersonation); no unit of this run is known to create it"},
		{name: "missing, held by a unit", accounts: fakeAccounts{known: true}, by: "flux-system", want: "ServiceAccount msdemo/flux does not exist: the unit applies as it (impersonation); unit flux-system creates it, and must apply before this unit"},
		{name: "not readable", accounts: fakeAccounts{}},
		{name: "read failed", accounts: fakeAccounts{err: errors.New("boom")}},
		{name: "a diff as the caller", accounts: fakeAccounts{known: true}, asCaller: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.ServiceAccount, opts.ServiceAccountNamespace, opts.ServiceAccountBy = "flux", "msdemo", tc.by
			r := newRun(opts, result.ModeApply)
			r.ns, r.asCaller = "deploy", tc.asCaller
			r.cl = cluster{accounts: tc.accounts}
			err := r.checkAccount(t.Context())
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
			var missing *MissingAccountError
			if tc.want != "" && !errors.As(err, &missing) {
				t.Errorf("error %T is no *MissingAccountError", err)
			}
		})
	}
}
