package pipeline

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// threeWay splits a pull request's diff (opts.Base) in two: what the PR
// changes, its base render against its head render (entries' Change), and
// what was changed in the cluster since this tool applied it (entries'
// Drift and Gone), which merging reverts where the PR leaves the field
// alone. It marks entries, the diff's (d and p's), in place; their Diff
// stays what the apply would do. Whatever stops it is a note, not a
// failure: the two-way diff is still right.
func (r *run) threeWay(ctx context.Context, d *desired, p *plan, entries []result.Entry) {
	if base := r.renderBase(ctx, d); base != nil {
		r.markChanges(entries, base, d.Rendered)
		review(r.res, entries, base, d.Rendered, r.opts.Noise, r.secrets.list())
		r.markDrift(entries, base, d.Rendered, p)
	}
}

// renderBase renders the unit at the pull request's base (opts.Base) as
// the head d is rendered; nil without a base, or when it does not render
// (a note says why).
func (r *run) renderBase(ctx context.Context, d *desired) *Rendered {
	if r.opts.Base == "" || r.opts.At == nil {
		return nil
	}
	base, err := r.renderAt(ctx, r.opts.Base, d.subs)
	if err != nil {
		r.note("no three-way diff: rendering the PR base: %v", err)
		return nil
	}
	r.res.Base = r.opts.Base
	return base
}

// reviewFailed runs a review's offline rules for a pull request's diff
// that stopped before its three-way diff (its dry-run failed): from the
// renders at the base and the head, the images the change changes, and
// the dangers and change of each entry reported. An object whose change
// has a danger but no entry (the dry-run never got to it, or the pull
// request deletes it) gets one, its action the renders' and its reason
// saying so, so that the reviewer sees it beside the failure.
func (r *run) reviewFailed(ctx context.Context, d *desired) {
	base := r.renderBase(ctx, d)
	if base == nil {
		return
	}
	offline := CompareRendered(base, d.Rendered)
	review(r.res, offline, base, d.Rendered, r.opts.Noise, r.secrets.list())
	reported := map[object.ID]int{}
	for i, e := range r.res.Entries {
		reported[e.Object] = i
	}
	r.markChanges(r.res.Entries, base, d.Rendered)
	for _, e := range offline {
		i, ok := reported[e.Object]
		switch {
		case ok:
			r.res.Entries[i].Dangers, r.res.Entries[i].Noise = e.Dangers, e.Noise
		case len(e.Dangers) > 0:
			e.Diff = ""
			e.Reason = "not dry-run (the dry-run failed): as the pull request changes it, base to head"
			r.res.Entries = append(r.res.Entries, e)
		}
	}
}

// renderAt renders the unit at commit rev as the head is rendered: same
// options and substitutions (subs), namespaces and owner labels. A unit
// missing there renders to nothing.
func (r *run) renderAt(ctx context.Context, rev string, subs substitutions) (*Rendered, error) {
	dir, err := r.opts.At(ctx, rev, r.opts.Dir)
	if err != nil || dir == nil {
		return &Rendered{Sources: map[object.ID]string{}}, err
	}
	o := r.renderOptions(subs)
	o.Dir, o.Snapshot = *dir, nil
	r.progress("rendering %s at %s", o.Dir.Rel, checkout.Short(rev))
	rendered, err := r.render(ctx, o)
	if err != nil {
		return nil, err
	}
	r.defaultNamespace(rendered)
	apply.SetOwnerLabels(rendered.Objects, r.owner)
	return rendered, nil
}

// markChanges sets each entry's Change: its render at the PR base against
// the head, deletions included.
func (r *run) markChanges(entries []result.Entry, base, head *Rendered) {
	values := r.secrets.list()
	before, after := byID(base.Objects), byID(head.Objects)
	for i := range entries {
		e := &entries[i]
		old, now := before[e.Object], after[e.Object]
		if old != nil || now != nil {
			e.Change = changeBetween(base, head, e.Object, old, now, values)
		}
	}
}

// markDrift sets each entry's Drift: the fields in which the apply would
// change the live object that this tool no longer owns there, because
// someone else wrote them since its last apply (kubectl edit, scale, an
// apply of their own). A changed field this tool still owns is the
// desired state changing (Git, or values it substitutes), not drift. Live
// and desired are both as the dry-run returns them, so the API server's
// defaults and formats never show as changes. Objects outside the
// inventory are not this tool's yet; objects not dry-run (untouched since
// the last apply) cannot have drifted.
func (r *run) markDrift(entries []result.Entry, base, head *Rendered, p *plan) {
	ours := map[object.ID]bool{}
	for _, e := range entriesOf(r.last) {
		ours[e.ID] = true
	}
	steps := map[object.ID]apply.Step{}
	for _, s := range p.dryRun.Steps {
		steps[s.Entry.Object] = s
	}
	before, after := byID(base.Objects), byID(head.Objects)
	values := r.secrets.list()
	for i := range entries {
		e := &entries[i]
		s, dryRun := steps[e.Object]
		if !dryRun || !ours[e.Object] {
			continue
		}
		if s.Live == nil {
			e.Gone = s.Entry.Action == result.Created && !s.Unverified
			continue
		}
		if s.Merged != nil && s.Entry.Action == result.Configured { // nothing to set again otherwise
			fields := head.SecretFields[e.Object].Union(base.SecretFields[e.Object])
			e.Drift, e.Pending = fieldDrift(s.Live, s.Merged, before[e.Object], after[e.Object], diff.Secrets{Fields: fields, Values: values})
		}
	}
}

// fieldDrift lists the fields in which merged (the dry-run) changes live
// that apply.FieldManager does not own in live, except fields new in Git
// (absent from live and from base, the object at the PR base; nil when
// the PR adds it). Each says whether the PR leaves it alone (merging
// reverts it to the value Git had) or changes it too (base → head).
// pending says the merge changes other fields than those and the PR's:
// the desired state moved since the last apply (later commits, values
// substituted). secrets.Fields are recorded on head (and base).
func fieldDrift(live, merged, base, head *unstructured.Unstructured, secrets diff.Secrets) (drift []result.FieldDrift, pending bool) {
	owned := diff.OwnedFields(live, apply.FieldManager)
	var byPR []string // the fields the PR changes
	var inBase map[string]bool
	if base != nil && head != nil {
		for _, c := range diff.FieldChanges(base, head, secrets) {
			byPR = append(byPR, c.Field)
		}
		inBase = diff.Leaves(base)
	}
	onMerged := secrets
	if head != nil {
		onMerged.Fields = diff.FieldsOn(secrets.Fields, head, merged)
	}
	for _, c := range diff.FieldChanges(live, merged, onMerged) {
		changedByPR := base == nil || slices.ContainsFunc(byPR, func(f string) bool { return diff.Related(f, c.Field) })
		// Not drift: a field this tool owns, one added to Git since, or
		// an object the PR adds. The desired state changed.
		if base == nil || diff.Covers(owned, c.Field) || c.From == "" && !holdsAny(inBase, c.Field) {
			pending = pending || !changedByPR
			continue
		}
		d := result.FieldDrift{Field: c.Field, Live: c.From, Applied: c.To, Merged: c.To, Reverted: true}
		if changedByPR {
			d.Applied, d.Reverted = diff.FieldAt(base, c.Field, secrets), false
		}
		drift = append(drift, d)
	}
	return drift, pending
}

// holdsAny reports whether fields holds path, a field below it or one
// holding it.
func holdsAny(fields map[string]bool, path string) bool {
	for f := range fields {
		if diff.Related(f, path) {
			return true
		}
	}
	return false
}

func byID(objs []*unstructured.Unstructured) map[object.ID]*unstructured.Unstructured {
	out := make(map[object.ID]*unstructured.Unstructured, len(objs))
	for _, u := range objs {
		out[object.IDOf(u)] = u
	}
	return out
}

// note records, in the result and the progress output, something the run
// could not do.
func (r *run) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.res.Notes = append(r.res.Notes, msg)
	r.progress("note: %s", msg)
}
