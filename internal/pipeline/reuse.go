package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/version"
)

// A run whose build would read exactly what the last successful apply's
// build read, with the same options, would build the same objects; if
// those are also untouched in the cluster, there is nothing to build, dry-run
// or apply. The inventory records the build's inputs for this (see
// inventory.Inputs). Builds that fetch remote bases or glob, and runs with
// post-build substitutions (values that may be secret, which a digest kept
// in the inventory could give away), are never reused.
//
// A unit with Helm releases is checked once its charts are rendered: a
// version range may resolve to a newer chart, and values may come from
// the cluster, whatever Git holds. When its inputs and every release's
// chart and values (helm.Chart.ConfigDigest, recorded in the inventory)
// are those of the last successful apply, helm-controller would not
// upgrade the release, and neither is it dry-run or applied here; unless
// a template read the cluster (lookup), which may render other objects
// with the same chart and values.

// inputsOf returns what to record of rendered's build, with subs
// substituted, or nil when it cannot be reused.
func (r *run) inputsOf(rendered *Rendered, subs substitutions) *inventory.Inputs {
	if !r.reusable(subs) || !rendered.Inputs.Complete {
		return nil
	}
	d, err := r.inputsDigest(rendered.Inputs, subs)
	if err != nil {
		return nil
	}
	return &inventory.Inputs{Digest: d, Files: rendered.Inputs.Files, Dirs: rendered.Inputs.Dirs}
}

// reusable reports whether a build with subs substituted may be reused.
func (r *run) reusable(subs substitutions) bool {
	secret := len(subs.values) > 0 && !subs.public
	return !r.opts.Recheck && !secret && !r.opts.Build.AllowRemoteBases
}

// inputsDigest hashes the build options, the values substituted, the
// namespace objects without one get, this binary's version and the inputs
// as they read now below the root.
func (r *run) inputsDigest(in build.Inputs, subs substitutions) (string, error) {
	files, err := in.Digest(r.opts.Dir.Root)
	if err != nil {
		return "", err
	}
	b := r.opts.Build
	b.Root, b.Path = "", ""
	key, err := json.Marshal(struct {
		Build      build.Options
		Path       string
		Namespace  string
		Substitute map[string]string // public values only (see reusable)
		Always     bool
		Tool       version.Info
		Inputs     string
	}{b, r.opts.Dir.Rel, r.objNS, subs.values, r.opts.SubstituteAlways, version.Get(), files})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:]), nil
}

// unchangedSinceLastApply reports whether the last apply succeeded, the
// build would read the same inputs with the same options (subs
// substituted), and every object it applied is untouched since. Then the
// run reuses that apply's outcome, and these are its entries: its objects,
// all unchanged.
func (r *run) unchangedSinceLastApply(ctx context.Context, subs substitutions) ([]result.Entry, bool) {
	last := r.last
	if !r.reusable(subs) || last == nil || last.Inputs == nil || last.Status.Ready.Status != "True" {
		return nil, false
	}
	if len(last.Status.Releases) > 0 {
		return nil, false // see chartsUnchangedSinceLastApply
	}
	d, err := r.inputsDigest(build.Inputs{Files: last.Inputs.Files, Dirs: last.Inputs.Dirs}, subs)
	if err != nil || d != last.Inputs.Digest {
		return nil, false
	}
	if r.movedAt != "" && r.movedAt == last.ResourceVersion {
		return nil, false // found moved by this very run, before it took the lock; they cannot move back
	}
	r.progress("the build's %d input(s) are unchanged since the last apply; checking its %d object(s)", len(last.Inputs.Files)+len(last.Inputs.Dirs), len(last.Entries))
	entries, ok := r.lastApplyUntouched(ctx)
	if ok {
		r.inputs = last.Inputs
		// Found ready under the same health checks, and untouched since:
		// not waited for again (see waitFor).
		if key := r.healthKey(); key != "" && key == last.Status.Health {
			r.unmovedHealthy = make(map[object.ID]bool, len(last.Entries))
			for _, e := range last.Entries {
				r.unmovedHealthy[e.ID] = true
			}
		}
	}
	return entries, ok
}

// chartsUnchangedSinceLastApply reports whether d, a unit with Helm
// releases, read the inputs of the last successful apply and rendered
// each release from the chart and values it had then, and whether every
// object of that apply is untouched since. Then, as for a unit without
// charts, the run reuses that apply's outcome and these are its entries.
func (r *run) chartsUnchangedSinceLastApply(ctx context.Context, d *desired) ([]result.Entry, bool) {
	last := r.last
	if len(d.Charts) == 0 || r.inputs == nil || last == nil || last.Inputs == nil || last.Status.Ready.Status != "True" ||
		r.inputs.Digest != last.Inputs.Digest || len(last.Status.Releases) != len(d.Charts) {
		return nil, false
	}
	recorded := recordedDigests(last)
	for _, c := range d.Charts {
		if recorded[c.Key()] != c.ConfigDigest || c.LookedUp {
			return nil, false // a chart that reads the cluster renders what it finds there now
		}
	}
	if len(d.entries) != len(last.Entries) || inventory.Diff(last.Entries, d.entries) != nil {
		return nil, false // the same inputs rendered other objects: capabilities or lookups changed
	}
	r.progress("the build's inputs and its %d release(s)' charts and values are unchanged since the last apply; checking its %d object(s)", len(d.Charts), len(last.Entries))
	return r.lastApplyUntouched(ctx)
}

// lastApplyUntouched reports whether every object the last apply recorded
// still has the resourceVersion it recorded, and returns that apply's
// entries, all unchanged.
func (r *run) lastApplyUntouched(ctx context.Context) ([]result.Entry, bool) {
	last := r.last
	recs := make([]apply.Recorded, 0, len(last.Entries))
	for _, e := range last.Entries {
		if e.ResourceVersion == "" {
			return nil, false // applied by ApplyAll, skipped (ssa: Ignore/IfNotPresent), or kept without being desired
		}
		recs = append(recs, apply.Recorded{ID: e.ID, APIVersion: e.Version, ResourceVersion: e.ResourceVersion})
	}
	found, err := r.cl.applier.Unmoved(ctx, recs)
	switch {
	case err != nil:
		r.progress("warning: checking the objects of the last apply: %v; building", err)
		return nil, false
	case len(found) != len(recs):
		r.progress("%d object(s) changed in the cluster since the last apply: building", len(recs)-len(found))
		r.moved = true
		return nil, false
	}
	entries := make([]result.Entry, len(last.Entries))
	for i, e := range last.Entries {
		entries[i] = result.Entry{Object: e.ID, Version: e.Version, Stage: result.StageOfKind(e.Version, e.Kind), Action: result.Unchanged}
	}
	return entries, true
}
