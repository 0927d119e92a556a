package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
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

// inputsOf returns what to record of rendered's build, or nil when it
// cannot be reused.
func (r *run) inputsOf(rendered *Rendered) *inventory.Inputs {
	if !reusable(r.opts) || !rendered.Inputs.Complete {
		return nil
	}
	d, err := inputsDigest(r.opts, rendered.Inputs)
	if err != nil {
		return nil
	}
	return &inventory.Inputs{Digest: d, Files: rendered.Inputs.Files, Dirs: rendered.Inputs.Dirs}
}

func reusable(opts Options) bool {
	return !opts.Recheck && len(opts.Substitute) == 0 && !opts.Build.AllowRemoteBases
}

// inputsDigest hashes the build options, this binary's version and the
// inputs as they read now below the root (resolved as Render does).
func inputsDigest(opts Options, in build.Inputs) (string, error) {
	abs, root, err := resolvePaths(opts.Path, opts.Root)
	if err != nil {
		return "", err
	}
	files, err := in.Digest(root)
	if err != nil {
		return "", err
	}
	path, err := filepath.Rel(root, abs)
	if err != nil {
		return "", err
	}
	b := opts.Build
	b.Root, b.Path = "", ""
	key, err := json.Marshal(struct {
		Build  build.Options
		Path   string
		Tool   version.Info
		Inputs string
	}{b, filepath.ToSlash(path), version.Get(), files})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:]), nil
}

// unchangedSinceLastApply reports whether the last apply succeeded, the
// build would read the same inputs with the same options, and every object
// it applied is untouched since. Then the run reuses that apply's outcome:
// its objects are all unchanged.
func (r *run) unchangedSinceLastApply(ctx context.Context) bool {
	prev := r.prev
	if !reusable(r.opts) || prev == nil || prev.Inputs == nil || prev.Status.Ready.Status != "True" || len(prev.Entries) == 0 {
		return false
	}
	d, err := inputsDigest(r.opts, build.Inputs{Files: prev.Inputs.Files, Dirs: prev.Inputs.Dirs})
	if err != nil || d != prev.Inputs.Digest {
		return false
	}
	recs := make([]apply.Recorded, 0, len(prev.Entries))
	for _, e := range prev.Entries {
		if e.ResourceVersion == "" {
			return false // applied by ApplyAll, skipped (ssa: Ignore/IfNotPresent), or kept without being desired
		}
		recs = append(recs, apply.Recorded{ID: e.ID, APIVersion: e.Version, ResourceVersion: e.ResourceVersion})
	}
	r.progress("the build's %d input(s) are unchanged since the last apply; checking its %d object(s)", len(prev.Inputs.Files)+len(prev.Inputs.Dirs), len(recs))
	found, err := apply.Unmoved(ctx, r.actor.Client, recs, r.mgr.GetOwnerLabels(r.opts.Name, r.ns))
	switch {
	case err != nil:
		r.progress("warning: checking the objects of the last apply: %v; building", err)
		return false
	case len(found) != len(recs):
		r.progress("%d object(s) changed in the cluster since the last apply: building", len(recs)-len(found))
		return false
	}
	r.inputs = prev.Inputs
	for _, e := range prev.Entries {
		r.res.Entries = append(r.res.Entries, result.Entry{Object: e.ID, Version: e.Version, Stage: result.StageOfKind(e.Version, e.Kind), Action: result.Unchanged})
	}
	return true
}

// undesired drops what a run recorded of objects it no longer applies
// (kept by prune safeguards, or with pruning off): only desired objects are
// ever untouched.
func undesired(entries []inventory.Entry) []inventory.Entry {
	out := make([]inventory.Entry, len(entries))
	for i, e := range entries {
		e.Digest, e.ResourceVersion = "", ""
		out[i] = e
	}
	return out
}
