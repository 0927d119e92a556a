package pipeline

import (
	"context"
	"maps"
	"slices"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// desired is the unit's desired state: its rendered objects, each in its
// namespace and labelled as the unit's, and their inventory entries.
type desired struct {
	*Rendered
	entries []inventory.Entry
	// subs are the values substituted in it.
	subs substitutions
	// targets are the objects of releases of another identity or cluster
	// than the unit's, with theirs (see route); the others are the
	// unit's. granted are the releases (helm.Reference.String()) whose
	// account gets its rights from this apply (see accountRule).
	targets map[object.ID]target
	granted map[string]bool
}

// substitutions are the post-build values a run substitutes: values by
// name, the names of the secret ones (their values are masked, and
// rendering records the fields they land in), and whether none may be
// secret (then they may be hashed into the inventory, see reusable).
type substitutions struct {
	values map[string]string
	secret []string
	public bool
}

// variables returns the run's substitutions: the unit's own (Options'
// Substitute, SubstituteSecret, SubstitutePublic) over the values
// Options.Variables finds now (a Flux Kustomization's substituteFrom).
// The secret values it finds are masked at once.
func (r *run) variables(ctx context.Context) (substitutions, error) {
	own := substitutions{values: r.opts.Substitute, secret: r.opts.SubstituteSecret, public: r.opts.SubstitutePublic}
	if r.opts.Variables == nil {
		return own, nil
	}
	vars, secret, err := r.opts.Variables(ctx)
	if err != nil {
		return substitutions{}, failure(result.ReasonBuildFailed, err)
	}
	s := substitutions{values: maps.Clone(vars), secret: slices.Clone(own.secret), public: own.public && len(secret) == 0}
	if s.values == nil {
		s.values = map[string]string{}
	}
	maps.Copy(s.values, own.values)
	values := make([]string, 0, len(secret))
	for _, name := range secret {
		values = append(values, vars[name])
		if _, isOwn := own.values[name]; !isOwn {
			s.secret = append(s.secret, name)
		}
	}
	r.opts.Mask(values)
	return s, nil
}

// renderOptions are the run's options with subs to substitute: what the
// unit is rendered with.
func (r *run) renderOptions(subs substitutions) Options {
	o := r.opts
	o.Substitute, o.SubstituteSecret, o.SubstitutePublic = subs.values, subs.secret, subs.public
	o.Namespace = r.objNS // resolved: a unit that is a chart is released there
	if o.ServiceAccount != "" {
		// Resolved as connect impersonates it: HelmReleases are checked
		// against it (see route).
		o.ServiceAccountNamespace = or(o.ServiceAccountNamespace, r.ns)
	}
	return o
}

// withCluster gives opts' chart rendering what it reads of the cluster,
// when charts are rendered: ConfigMaps and Secrets not in the unit, what
// templates' lookup reads, the
// cluster's capabilities (asked for once per run), and the releases the
// unit installed (templates see them as .Release.IsUpgrade).
func (r *run) withCluster(ctx context.Context, opts Options) (Options, error) {
	if opts.Charts == nil || r.cl.charts == nil {
		return opts, nil
	}
	charts := *opts.Charts
	if r.last != nil {
		charts.Recorded = map[string]helm.Recorded{}
		for _, rel := range r.last.Status.Releases {
			charts.Recorded[rel.Name] = helm.Recorded{Digest: rel.Digest, Upgraded: rel.Upgraded}
		}
	}
	if charts.Lookup == nil {
		charts.Lookup = r.cl.charts.Lookup
	}
	if charts.LookupObject == nil {
		charts.LookupObject = r.cl.charts.LookupObject
	}
	if charts.Capabilities.KubeVersion == "" {
		caps, err := r.cl.charts.Capabilities(ctx)
		if err != nil {
			return opts, err
		}
		charts.Capabilities = caps
	}
	if rt := r.cl.routes; rt != nil && charts.Cluster == nil {
		// A release of another identity or cluster renders as helm-
		// controller renders it there: that cluster's capabilities, and
		// lookups as that identity.
		unit := r.unitIdentity()
		rt.seedCapabilities(charts.Capabilities)
		charts.Cluster = func(ctx context.Context, rel *helm.Release) (*helm.View, error) {
			t := releaseTarget(rel.Namespace, rel.ServiceAccountName, rel.KubeConfig, unit)
			if t.own() {
				return nil, nil
			}
			return rt.view(ctx, t)
		}
	}
	opts.Charts = &charts
	return opts, nil
}

// build renders the unit (build, decrypt, substitute subs), puts objects
// of namespaced kinds that name no namespace into the run's namespace, as
// kubectl and kapp do, and labels every object as the unit's.
func (r *run) build(ctx context.Context, subs substitutions) (*desired, error) {
	r.progress("building %s", r.opts.Dir.Rel)
	opts, err := r.withCluster(ctx, r.renderOptions(subs))
	if err != nil {
		return nil, failure(result.ReasonBuildFailed, err)
	}
	if r.cl.charts != nil {
		// A ResourceSet's dependsOn reads the cluster as the run's
		// identity, waited for as the unit's dependencies are.
		opts.ResourceSets.Lookup = r.cl.charts.LookupObject
		opts.ResourceSets.WaitForDependencies = r.opts.WaitForDependencies
	}
	rendered, err := r.render(ctx, opts)
	if resourceset.IsDependency(err) {
		return nil, failure(result.ReasonDependencyNotReady, err)
	}
	if err != nil {
		return nil, failure(result.ReasonBuildFailed, err)
	}
	r.inputs = r.inputsOf(rendered, subs)
	r.noteLeftOut(rendered.LeftOut)
	for _, n := range rendered.Notes {
		r.note("%s", n)
	}
	if n := r.defaultNamespace(rendered); n > 0 {
		r.res.Namespace = r.objNS
		r.progress("%d object(s) without a namespace go to namespace %s", n, r.objNS)
	}
	// An object the API server cannot store fails now, not after the
	// dry-run sent it (and every other object); so does Secret data that
	// is not base64, which the dry-run would report without its key.
	if err := validate.Sizes(rendered.Objects, rendered.Sources); err != nil {
		return nil, failure(result.ReasonValidationFailed, err)
	}
	if err := validate.SecretData(rendered.Objects, rendered.Sources); err != nil {
		return nil, failure(result.ReasonValidationFailed, err)
	}
	apply.SetOwnerLabels(rendered.Objects, r.owner)
	d := &desired{Rendered: rendered, entries: inventoryEntries(rendered.Objects), subs: subs}
	markReleases(d.entries, rendered.Charts)
	markGenerators(d.entries, rendered.Generated)
	r.hold(d)
	if err := r.route(ctx, d); err != nil {
		return nil, failure(result.ReasonBuildFailed, err)
	}
	return d, nil
}

// defaultNamespace gives r.objNS to the objects of namespaced kinds that
// have no namespace, and returns how many there were. A kind is namespaced
// if a CRD of the build says so, else if the cluster says so; kinds
// neither knows are left for the dry-run to report.
func (r *run) defaultNamespace(rendered *Rendered) int {
	crdScopes := map[schema.GroupKind]bool{}
	for _, u := range rendered.Objects {
		if utils.IsCRD(u) {
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
			crdScopes[schema.GroupKind{Group: group, Kind: kind}] = scope == "Namespaced"
		}
	}
	moved := map[object.ID]object.ID{}
	for _, u := range rendered.Objects {
		if u.GetNamespace() != "" {
			continue
		}
		gk := u.GroupVersionKind().GroupKind()
		namespaced, known := crdScopes[gk]
		if !known {
			namespaced, known = r.cl.scopes.Namespaced(gk)
		}
		if !known || !namespaced {
			continue
		}
		old := object.IDOf(u)
		u.SetNamespace(r.objNS)
		moved[old] = object.IDOf(u)
	}
	object.Rekey(rendered.Sources, moved)
	object.Rekey(rendered.SecretFields, moved)
	return len(moved)
}

// inventoryEntries returns the inventory entries of objs, with their manifest
// digests, except for Secrets: a digest of a Secret's values, kept in the
// inventory, would let whoever can read the inventory guess a weak value
// offline. Secrets are therefore always dry-run.
func inventoryEntries(objs []*unstructured.Unstructured) []inventory.Entry {
	out := make([]inventory.Entry, len(objs))
	for i, u := range objs {
		out[i] = inventory.Entry{ID: object.IDOf(u), Version: u.GetAPIVersion()}
		if !utils.IsSecret(u) {
			out[i].Digest = object.Digest(u)
		}
	}
	return out
}
