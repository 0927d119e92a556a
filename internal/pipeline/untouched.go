package pipeline

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// untouched finds the objects nobody changed since the last run left them
// as desired: their manifest has the digest recorded then, and the live
// object still has the resourceVersion recorded then. Every edit, even of
// status or metadata, moves a resourceVersion, so an object someone
// edited, deleted or stripped of its owner labels is never among them.
// They need no dry-run and no apply. --recheck, or a unit that never ran,
// finds none.
func (r *run) untouched(ctx context.Context, desired []inventory.Entry) map[object.ID]string {
	if r.opts.Recheck || r.prev == nil {
		return nil
	}
	last := make(map[object.ID]inventory.Entry, len(r.prev.Entries))
	for _, e := range r.prev.Entries {
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
	found, err := apply.Unmoved(ctx, r.actor.Client, recs, r.mgr.GetOwnerLabels(r.opts.Name, r.ns))
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
func untouchedEntries(objs []*unstructured.Unstructured, untouched map[object.ID]string, sources map[object.ID]string) []result.Entry {
	var out []result.Entry
	for _, u := range objs {
		id := object.IDOf(u)
		if _, ok := untouched[id]; ok {
			out = append(out, result.Entry{Object: id, Version: u.GetAPIVersion(), Source: sources[id], Stage: result.StageOf(u), Action: result.Unchanged})
		}
	}
	return out
}

// withVersions records, on the desired entries, the resourceVersion each
// object had when last seen as desired; entries without one are checked
// with a dry-run next time.
func withVersions(entries []inventory.Entry, maps ...map[object.ID]string) []inventory.Entry {
	out := make([]inventory.Entry, len(entries))
	for i, e := range entries {
		for _, m := range maps {
			if rv, ok := m[e.ID]; ok {
				e.ResourceVersion = rv
			}
		}
		out[i] = e
	}
	return out
}

// failedEntries are the plan's failures: when a dry-run fails nothing is
// applied, so the rest of the plan is not an outcome.
func failedEntries(p *apply.Plan) []result.Entry {
	var out []result.Entry
	for _, e := range p.Entries() {
		if e.Action == result.Failed {
			out = append(out, e)
		}
	}
	return out
}

// settle records, for the objects this run applied and then waited for,
// the resourceVersion they reached by reporting status only (a rollout),
// so the next run need not dry-run them (see apply.Settled).
func (r *run) settle(ctx context.Context, ids []object.ID) {
	if r.prev == nil || len(r.appliedAt) == 0 {
		return
	}
	waited := map[object.ID]bool{}
	for _, id := range ids {
		waited[id] = true
	}
	var applied []apply.Applied
	for _, e := range r.prev.Entries {
		if at, ok := r.appliedAt[e.ID]; ok && waited[e.ID] && e.ResourceVersion != "" {
			applied = append(applied, apply.Applied{Recorded: apply.Recorded{ID: e.ID, APIVersion: e.Version, ResourceVersion: e.ResourceVersion}, At: at})
		}
	}
	if len(applied) == 0 {
		return
	}
	settled, err := apply.Settled(ctx, r.actor.Client, applied, r.mgr.GetOwnerLabels(r.opts.Name, r.ns))
	if err != nil {
		return // they are dry-run next time, as without this
	}
	for i, e := range r.prev.Entries {
		if rv, ok := settled[e.ID]; ok {
			r.prev.Entries[i].ResourceVersion = rv
		}
	}
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

// checkUnverified validates, against the offline schemas, the objects no
// dry-run could check because their Namespace or kind comes with the same
// build, so server validation still checks every object before anything
// is written. Kinds without a known schema are left to the apply.
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
	f.Errors, f.UnknownKinds = errs, nil
	if err := f.Err(); err != nil {
		return fmt.Errorf("%d object(s) in a Namespace or of a kind this build creates were checked offline: %w", len(objs), err)
	}
	return nil
}

// dryRunReason is the Flux reason a failed dry-run ends the run with: with
// server validation the dry-run is the validation.
func (r *run) dryRunReason() result.Reason {
	if r.opts.Validation == result.ValidationServer {
		return result.ReasonValidationFailed
	}
	return result.ReasonApplyFailed
}
