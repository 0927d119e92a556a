package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// plan is what validation leaves to the apply: the desired state, the
// objects untouched since the last run, and the dry-run plan of the rest.
type plan struct {
	*desired
	untouched map[object.ID]string
	dryRun    *apply.Plan
}

// validate checks the desired state before anything is written, in one
// place for every mode: the offline schema check (client validation),
// then a server-side dry-run of every object not untouched since the last
// run (with server validation, that is the validation; objects no dry-run
// can reach yet, in a Namespace or of a kind the build creates, are
// checked offline). Any failure ends the run with nothing applied.
//
// It returns the plan and the entries to report: the untouched objects,
// unchanged; after a failed dry-run, the objects that failed it (an apply,
// where the rest of the plan is no outcome), or the whole predicted plan
// (a diff).
func (r *run) validate(ctx context.Context, d *desired) (*plan, []result.Entry, error) {
	r.res.Validation = r.opts.Validation
	if failed, err := r.checkKinds(d); err != nil {
		return nil, failed, failure(result.ReasonValidationFailed, err)
	}
	if r.opts.Validation == result.ValidationClient {
		r.progress("validating %d object(s) against the Kubernetes %s schemas", len(d.Objects), validate.KubernetesVersion)
		if err := r.opts.Schemas.Client(d.Objects, d.Sources); err != nil {
			return nil, nil, failure(result.ReasonValidationFailed, err)
		}
	}
	p := &plan{desired: d, untouched: r.untouched(ctx, d.entries)}
	work := without(d.Objects, p.untouched)
	if r.opts.Validation == result.ValidationServer {
		r.progress("validating %d object(s) with a server-side dry-run", len(work))
	} else {
		r.progress("dry-running %d object(s)", len(work))
	}
	dr, err := r.dryRun(ctx, work, d.Rendered)
	if err == nil {
		err = r.checkUnverified(dr, d.Sources)
	}
	r.noteStoodIn(d, dr)
	p.dryRun = dr
	if err != nil {
		if r.mode.Writes() {
			return nil, failedEntries(dr), failure(r.dryRunReason(), err)
		}
		return nil, slices.Concat(untouchedEntries(d, p.untouched), dr.Entries()), failure(r.dryRunReason(), err)
	}
	return p, untouchedEntries(d, p.untouched), nil
}

// dryRun dry-runs objs. Objects refused because their namespace is being
// deleted (a run right after a delete of the unit) are waited for, up to
// the run's timeout, until the namespace is gone, then dry-run again: the
// unit may create the namespace anew.
func (r *run) dryRun(ctx context.Context, objs []*unstructured.Unstructured, d *Rendered) (*apply.Plan, error) {
	p, err := r.cl.applier.DryRun(ctx, objs, r.applyOptions(d))
	namespaces := apply.TerminatingNamespaces(err)
	if len(namespaces) == 0 {
		r.noteKept(p)
		return p, err
	}
	r.progress("namespace(s) %s being deleted; waiting up to %s for them to be gone", strings.Join(namespaces, ", "), r.opts.Timeout)
	gone := make([]inventory.Entry, len(namespaces))
	for i, ns := range namespaces {
		gone[i] = inventory.Entry{ID: object.ID{Kind: "Namespace", Name: ns}, Version: "v1"}
	}
	if werr := r.cl.pruner.WaitGone(ctx, gone, r.opts.Timeout); werr != nil {
		return p, fmt.Errorf("%w\n%v", err, werr)
	}
	return r.cl.applier.DryRun(ctx, objs, r.applyOptions(d))
}

// noteKept says which fields spec.ignore left as the cluster has them in
// the objects the plan applies.
func (r *run) noteKept(p *apply.Plan) {
	if p == nil {
		return
	}
	for _, s := range p.Steps {
		if len(s.Kept) > 0 {
			r.progress("%s: %s kept as the cluster has it (spec.ignore)", s.Entry.Object, strings.Join(s.Kept, ", "))
		}
	}
}

// checkKinds makes sure, whatever the validation, that the cluster can
// take every object of d before anything is written: objects of a kind it
// does not serve, defined by no CRD of the unit, would only fail the apply
// once the unit's Namespaces and other definitions were written (and the
// dry-run cannot reach those in a Namespace the unit creates). It returns
// those objects as failed entries.
func (r *run) checkKinds(d *desired) ([]result.Entry, error) {
	err := r.kinds(d)
	var unserved *validate.UnservedKindsError
	if !errors.As(err, &unserved) {
		return nil, err
	}
	reasons := map[object.ID]string{}
	for _, k := range unserved.Kinds {
		for _, o := range k.Objects {
			reasons[o.ID] = k.Reason()
		}
	}
	var failed []result.Entry
	for _, u := range d.Objects {
		id := object.IDOf(u)
		if reason, ok := reasons[id]; ok {
			failed = append(failed, result.Entry{Object: id, Version: u.GetAPIVersion(), Source: d.Sources[id], Stage: result.StageOf(u), Action: result.Failed, Reason: reason})
		}
	}
	return failed, err
}

// kinds checks the kinds of d's objects on the cluster each goes to (see
// validate.Kinds): the kinds other units define are known on the unit's
// cluster only. The kinds unserved on every cluster are one
// *validate.UnservedKindsError.
func (r *run) kinds(d *desired) error {
	byCluster := map[string][]*unstructured.Unstructured{}
	order := []string{""}
	for _, u := range d.Objects {
		c := d.targets[object.IDOf(u)].Cluster
		if _, ok := byCluster[c]; !ok && c != "" {
			order = append(order, c)
		}
		byCluster[c] = append(byCluster[c], u)
	}
	all := &validate.UnservedKindsError{}
	var errs []error
	for _, c := range order {
		known, served := r.opts.KnownKinds, r.cl.scopes.Serves
		if !r.mode.Writes() {
			// A diff takes what earlier units of the run would create as
			// present (their CRDs' kinds), on the unit's own cluster.
			known = append(slices.Clone(known), r.opts.Earlier.kinds()...)
		}
		if c != "" {
			other, err := r.cl.routes.clusterAsCaller(c)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			known, served = nil, mapperScopes{other.Mapper}.Serves
		}
		err := validate.Kinds(byCluster[c], d.Sources, known, served)
		var unserved *validate.UnservedKindsError
		switch {
		case errors.As(err, &unserved):
			all.Kinds = append(all.Kinds, unserved.Kinds...)
		case err != nil:
			errs = append(errs, err)
		}
	}
	if len(all.Kinds) > 0 {
		errs = append(errs, all)
	}
	if len(errs) == 1 {
		return errs[0] // as validate.Kinds returns it
	}
	return errors.Join(errs...)
}

// noteStoodIn says which releases' objects were dry-run as the unit,
// their account's rights coming with this apply (see accountRule): the
// apply, as that account, checks them.
func (r *run) noteStoodIn(d *desired, p *apply.Plan) {
	if p == nil {
		return
	}
	stood := map[object.ID]bool{}
	for _, s := range p.Steps {
		if s.StoodIn {
			stood[s.Entry.Object] = true
		}
	}
	if len(stood) == 0 {
		return
	}
	for _, c := range d.Charts {
		n := 0
		for _, id := range c.Objects {
			if stood[id] {
				n++
			}
		}
		if n > 0 {
			r.note("%s: %d object(s) dry-run as %s: %s gets its rights from this unit's own objects, so they are applied as it once those are, which checks them",
				c.Release, n, r.unitIdentity(), d.targets[c.Objects[0]].Account)
		}
	}
}

// applyOptions are the apply package's options for this run of d; a run
// that does not write asks the dry-run for diffs, masked by where values
// came from.
func (r *run) applyOptions(d *Rendered) apply.Options {
	o := apply.Options{Force: r.opts.Force, WaitTimeout: r.opts.Timeout, Sources: d.Sources, Diffs: !r.mode.Writes(),
		SecretFields: d.SecretFields, Secrets: r.secrets.list(), Ignore: r.opts.Ignore}
	if !r.mode.Writes() {
		o.Created = r.opts.Earlier.created()
	}
	return o
}

// dryRunReason is the Flux reason a failed dry-run ends the run with: with
// server validation, and in a diff, the dry-run is the validation.
func (r *run) dryRunReason() result.Reason {
	if r.opts.Validation == result.ValidationServer || !r.mode.Writes() {
		return result.ReasonValidationFailed
	}
	return result.ReasonApplyFailed
}

// checkUnverified validates, against the offline schemas, the objects no
// dry-run could check because their Namespace or kind comes with the same
// build, so server validation still checks every object before anything
// is written. Kinds without a known schema, or at a version the schemas
// do not serve (the cluster may), are left to the apply.
func (r *run) checkUnverified(p *apply.Plan, sources map[object.ID]string) error {
	objs := p.Unverified()
	if r.opts.Validation != result.ValidationServer || len(objs) == 0 {
		return nil
	}
	unverified := map[object.ID]bool{}
	for _, u := range objs {
		unverified[object.IDOf(u)] = true
	}
	// The build's CRDs give custom resources their schemas; the server has
	// checked the CRDs themselves.
	for _, s := range p.Steps {
		if utils.IsCRD(s.Object) {
			objs = append(objs, s.Object)
		}
	}
	f, err := validate.Check(objs, sources)
	if err != nil {
		return err
	}
	var errs []*validate.Error
	for _, e := range f.Errors {
		if unverified[e.Object] {
			errs = append(errs, e)
		}
	}
	f.Errors, f.UnknownKinds, f.Unserved = errs, nil, nil
	if err := f.Err(); err != nil {
		return fmt.Errorf("%d object(s) in a Namespace or of a kind this build creates were checked offline: %w", len(objs), err)
	}
	return nil
}

// untouched finds the objects nobody changed since the last run left them
// as desired: their manifest has the digest recorded then, and the live
// object still has the resourceVersion recorded then. Every edit, even of
// status or metadata, moves a resourceVersion, so an object someone
// edited, deleted or stripped of its owner labels is never among them.
// They need no dry-run and no apply. Recheck, or a unit that never ran,
// finds none.
func (r *run) untouched(ctx context.Context, desired []inventory.Entry) map[object.ID]string {
	if r.opts.Recheck || r.last == nil {
		return nil
	}
	last := make(map[object.ID]inventory.Entry, len(r.last.Entries))
	for _, e := range r.last.Entries {
		last[e.ID] = e
	}
	var recs []apply.Recorded
	for _, e := range desired {
		if l, ok := last[e.ID]; ok && e.Digest != "" && l.Digest == e.Digest && l.ResourceVersion != "" {
			recs = append(recs, apply.Recorded{ID: e.ID, APIVersion: e.Version, ResourceVersion: l.ResourceVersion})
		}
	}
	if len(recs) == 0 {
		return nil
	}
	r.progress("checking %d object(s) against the inventory", len(desired))
	found, err := r.cl.applier.Unmoved(ctx, recs)
	if err != nil {
		r.progress("warning: checking objects against the inventory: %v; they are dry-run instead", err)
	}
	if len(found) > 0 {
		r.progress("%d object(s) untouched since the last run (same manifest, same resourceVersion)", len(found))
	}
	return found
}

// without returns objs minus the untouched ones, in order.
func without(objs []*unstructured.Unstructured, untouched map[object.ID]string) []*unstructured.Unstructured {
	if len(untouched) == 0 {
		return objs
	}
	out := make([]*unstructured.Unstructured, 0, len(objs)-len(untouched))
	for _, u := range objs {
		if _, ok := untouched[object.IDOf(u)]; !ok {
			out = append(out, u)
		}
	}
	return out
}

// untouchedEntries reports the untouched objects as unchanged.
func untouchedEntries(d *desired, untouched map[object.ID]string) []result.Entry {
	var out []result.Entry
	for _, u := range d.Objects {
		id := object.IDOf(u)
		if _, ok := untouched[id]; ok {
			out = append(out, result.Entry{Object: id, Version: u.GetAPIVersion(), Source: d.Sources[id], Stage: result.StageOf(u), Action: result.Unchanged})
		}
	}
	return out
}

// failedEntries are the plan's failures.
func failedEntries(p *apply.Plan) []result.Entry {
	var out []result.Entry
	for _, e := range p.Entries() {
		if e.Action == result.Failed {
			out = append(out, e)
		}
	}
	return out
}

// countWrites counts the objects a plan will create or configure.
func countWrites(p *apply.Plan) int {
	n := 0
	for _, e := range p.Entries() {
		if e.Action == result.Created || e.Action == result.Configured {
			n++
		}
	}
	return n
}
