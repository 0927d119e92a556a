package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// identity is who a unit's objects are applied as: a service account,
// impersonated (see connect), or, with no Name, the caller's own
// credentials. A Name without a Namespace is an account of the inventory
// namespace while that is not known (rendering without a cluster, with
// the kubeconfig's namespace for inventory namespace).
type identity struct{ Namespace, Name string }

func (i identity) String() string {
	switch {
	case i.Name == "":
		return "the caller's own credentials (no service account)"
	case i.Namespace == "":
		return "service account " + i.Name + " of the inventory namespace"
	}
	return "system:serviceaccount:" + i.Namespace + ":" + i.Name
}

// is says whether i is the account namespace/name; an unknown namespace
// is taken to be it (the run that knows it checks again).
func (i identity) is(namespace, name string) bool {
	return i.Name == name && (i.Namespace == "" || i.Namespace == namespace)
}

// appliesAs is the identity a unit with opts is applied as: its service
// account in ServiceAccountNamespace, else in the inventory namespace, as
// connect impersonates it.
func appliesAs(opts Options) identity {
	if opts.ServiceAccount == "" {
		return identity{}
	}
	return identity{Name: opts.ServiceAccount, Namespace: or(opts.ServiceAccountNamespace, opts.InventoryNamespace)}
}

// unitIdentity is the identity the run applies the unit as, its
// namespace resolved as connect impersonates it.
func (r *run) unitIdentity() identity {
	as := appliesAs(r.opts)
	if as.Name != "" {
		as.Namespace = or(as.Namespace, r.ns)
	}
	return as
}

// route resolves the target of each release d rendered (see
// releaseTarget), connects to it and checks its account, before anything
// is dry-run: each object of a release of another identity or cluster is
// then applied, pruned and waited for as that target, and its inventory
// entry says so. A release whose cluster cannot be reached, or whose
// account does not exist and is not created by the unit, fails the unit
// (each a file error at its HelmRelease).
func (r *run) route(ctx context.Context, d *desired) error {
	rt := r.cl.routes
	if rt == nil || len(d.Charts) == 0 {
		return nil
	}
	unit := r.unitIdentity()
	of, standIn, releases, standInReleases := map[object.ID]target{}, map[object.ID]bool{}, map[string]target{}, map[string]bool{}
	for _, c := range d.Charts {
		t := chartTarget(c, unit)
		releases[c.Release.String()] = t
		if !t.own() {
			for _, id := range c.Objects {
				of[id] = t
			}
		}
	}
	own := ownObjects(d.Objects, of)
	lineOf := linesIn(r.opts.Dir.Root)
	var errs []error
	for _, c := range d.Charts {
		t := releases[c.Release.String()]
		if t.own() {
			continue
		}
		stand, err := r.reach(ctx, rt, t, own, c)
		if err != nil {
			errs = append(errs, c.Refuse(lineOf, err))
			continue
		}
		for _, id := range c.Objects {
			standIn[id] = stand
		}
		standInReleases[c.Release.String()] = stand
		r.progress("%s: installed as %s, as helm-controller installs it", c.Release, t)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	rt.route(of, standIn, releases, standInReleases)
	d.targets, d.granted = of, standInReleases
	for i, e := range d.entries {
		if t, ok := of[e.ID]; ok {
			d.entries[i] = onTarget(e, t)
		}
	}
	return nil
}

// reach connects to t, the target of release c, and checks its account
// (see accountRule) against own, the unit's own objects: it says whether
// the release's objects may be dry-run as the unit, their account's
// rights coming with this apply.
func (r *run) reach(ctx context.Context, rt *router, t target, own []*unstructured.Unstructured, c helm.Chart) (bool, error) {
	if _, err := rt.connect(t); err != nil {
		if t.Cluster != "" {
			return false, err // it names spec.kubeConfig's Secret
		}
		return false, fmt.Errorf("%s: %w", accountField(c), err)
	}
	if t.Account.Name == "" {
		return false, nil
	}
	exists, known, err := rt.accountExists(ctx, t)
	if err != nil {
		return false, fmt.Errorf("%s: %w", accountField(c), err)
	}
	if !known {
		r.progress("warning: whether ServiceAccount %s/%s exists could not be read: %s is dry-run and applied as it all the same", t.Account.Namespace, t.Account.Name, c.Release)
		exists = true
	}
	if !exists && t.Cluster == "" && !r.mode.Writes() {
		// A diff before the first apply: an earlier unit of the run creates
		// the account (or grants its rights); its rights are checked once
		// it exists, by the apply.
		if why := r.opts.Earlier.unready(t.Account.Namespace, t.Account.Name); why != "" {
			r.progress("%s: %s; dry-run as the unit", c.Release, why)
			return true, nil
		}
	}
	return accountRule(t, exists, own, accountField(c))
}

// ownObjects are the objects of objs applied as the unit: not those of a
// release of another target (theirs).
func ownObjects(objs []*unstructured.Unstructured, theirs map[object.ID]target) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range objs {
		if _, ok := theirs[object.IDOf(u)]; !ok {
			out = append(out, u)
		}
	}
	return out
}

// accountRule decides what becomes of a release of target t, whose
// service account exists or not, in a unit applying own (its objects
// other than the release's). An account the unit creates, or whose
// rights it may give (it holds RBAC objects), cannot be checked before
// the unit's own objects are applied: the release's objects are dry-run
// as the unit (standIn), then applied as the account, after the unit's
// own objects, which checks its rights. An account that does not exist,
// and that the unit does not create, is an error naming it, as
// helm-controller refuses to act as a missing account; so is one on
// another cluster, which the unit cannot create there. field names
// where the account comes from (accountField).
func accountRule(t target, exists bool, own []*unstructured.Unstructured, field string) (standIn bool, err error) {
	if t.Account.Name == "" {
		return false, nil
	}
	local := t.Cluster == ""
	creates, grants := false, false
	for _, u := range own {
		gvk := u.GroupVersionKind()
		switch {
		case gvk.Group == "" && gvk.Kind == "ServiceAccount" && u.GetNamespace() == t.Account.Namespace && u.GetName() == t.Account.Name:
			creates = true
		case gvk.Group == "rbac.authorization.k8s.io" && slices.Contains([]string{"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}, gvk.Kind):
			grants = true
		}
	}
	switch {
	case !exists && local && creates:
		return true, nil
	case !exists:
		where := ""
		if !local {
			where = " on the cluster of kubeConfig Secret " + t.Cluster
		}
		return false, fmt.Errorf("%s: ServiceAccount %s/%s does not exist%s, and this unit does not create it: helm-controller installs the release as %s",
			field, t.Account.Namespace, t.Account.Name, where, t.Account)
	}
	return local && grants, nil
}

// accountField names where c's account comes from, for messages.
func accountField(c helm.Chart) string {
	if c.AccountField != "" {
		return c.AccountField
	}
	return "spec.serviceAccountName"
}

// linesIn returns, for files under root, the line of an object in one
// (object.Lines), reading each file once; 0 when it cannot be read.
func linesIn(root string) func(file string, id object.ID) int {
	files := map[string]func(object.ID) int{}
	return func(file string, id object.ID) int {
		lines, ok := files[file]
		if !ok {
			path := file
			if !filepath.IsAbs(path) {
				path = filepath.Join(root, filepath.FromSlash(file))
			}
			data, _ := os.ReadFile(path) // no file, no line
			lines = object.Lines(data)
			files[file] = lines
		}
		return lines(id)
	}
}
