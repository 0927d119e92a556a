package pipeline

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/tags"
)

// markReleases records, on the entries of objects charts rendered, their
// HelmRelease: a run that leaves a release out (hold) keeps them by it.
func markReleases(entries []inventory.Entry, charts []helm.Chart) {
	of := map[object.ID]string{}
	for _, c := range charts {
		for _, id := range c.Objects {
			of[id] = c.Release.String()
		}
	}
	for i := range entries {
		entries[i].Release = of[entries[i].ID]
	}
}

// markGenerators records, on the entries of objects a ResourceSet
// generated, that ResourceSet (see inventory.Entry.Generator).
func markGenerators(entries []inventory.Entry, generated map[object.ID]object.ID) {
	for i := range entries {
		if rs, ok := generated[entries[i].ID]; ok {
			entries[i].Generator = rs.String()
		}
	}
}

// hold leaves out of d the releases whose HelmRelease the run's tags do
// not select (Options.IncludeTags, ExcludeTags; the unit's own tags count
// as the release's): they are left as the cluster has them. Their objects
// are neither applied nor pruned — those the unit recorded of them, and
// those they render now, stay in its inventory (r.held) — their record
// stays as it was, and none of their hooks runs.
func (r *run) hold(d *desired) {
	if len(r.opts.IncludeTags)+len(r.opts.ExcludeTags) == 0 || len(d.Charts) == 0 {
		return
	}
	heldIDs := map[object.ID]bool{}
	heldReleases := map[string]bool{} // HelmRelease/namespace/name
	heldKeys := map[string]bool{}     // the Helm release's namespace/name
	var kept []helm.Chart
	for _, c := range d.Charts {
		if tags.Selects(slices.Concat(r.opts.UnitTags, c.Tags), r.opts.IncludeTags, r.opts.ExcludeTags) {
			kept = append(kept, c)
			continue
		}
		heldReleases[c.Release.String()], heldKeys[c.Key()] = true, true
		for _, id := range c.Objects {
			heldIDs[id] = true
		}
		what := "no tags"
		if len(c.Tags) > 0 {
			what = "tags " + strings.Join(c.Tags, ", ")
		}
		r.note("%s (%s) is left out by the run's tags: its %d object(s) are left as they are, neither applied nor pruned", c.Release, what, len(c.Objects))
	}
	if len(heldReleases) == 0 {
		return
	}
	d.Charts = kept
	d.Objects = slices.DeleteFunc(slices.Clone(d.Objects), func(u *unstructured.Unstructured) bool { return heldIDs[object.IDOf(u)] })
	var now []inventory.Entry
	d.entries = slices.DeleteFunc(slices.Clone(d.entries), func(e inventory.Entry) bool {
		if heldIDs[e.ID] {
			now = append(now, e)
			return true
		}
		return false
	})
	// What the unit owns of them: what it recorded (by release, or by
	// ID), and what they render now, with no version of the run's (they
	// are not applied).
	for _, e := range entriesOf(r.last) {
		if heldReleases[e.Release] || heldIDs[e.ID] {
			r.held = append(r.held, e)
		}
	}
	r.held = inventory.Union(undesired(now), r.held)
	// An inventory written before entries named their release cannot
	// tell what else was the held releases': nothing it holds is pruned.
	if last := entriesOf(r.last); len(last) > 0 && !slices.ContainsFunc(last, func(e inventory.Entry) bool { return e.Release != "" }) {
		unknown := inventory.Diff(inventory.Diff(last, d.entries), r.held)
		if len(unknown) > 0 {
			r.note("%d object(s) of the unit's inventory cannot be told apart from the left-out releases' (it was recorded before objects named their release): none is pruned in this run", len(unknown))
			r.held = append(r.held, unknown...)
		}
	}
	for _, rel := range r.lastStatus().Releases {
		if heldKeys[rel.Name] {
			r.heldRecords = append(r.heldRecords, rel)
		}
	}
}
