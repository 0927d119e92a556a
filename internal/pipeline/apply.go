package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// Apply runs the unit: dependencies, render, validate, record the
// inventory (old ∪ new), apply in stages, prune, record the inventory (new),
// wait for health. Every step that fails ends the run with its Flux reason
// on the result, and the inventory records the attempt. The error is
// non-nil exactly when the result is not ready.
func Apply(ctx context.Context, c *kube.Clients, opts Options) (*result.Result, error) {
	r := newRun(c, opts, result.ModeApply)
	if err := r.begin(ctx, result.ReasonApplyFailed); err != nil {
		return r.fail(ctx, err)
	}

	if err := r.checkDependencies(ctx); err != nil {
		return r.fail(ctx, err)
	}
	if r.unchangedSinceLastApply(ctx) {
		return r.waitAndSucceed(ctx, append(appliedIDs(r.res.Entries), opts.HealthChecks...))
	}
	r.progress("building %s", opts.Path)
	rendered, err := Render(ctx, opts)
	if err != nil {
		return r.fail(ctx, failure(result.ReasonBuildFailed, err))
	}
	r.inputs = r.inputsOf(rendered)
	objs := rendered.Objects
	r.res.Validation = opts.Validation
	if opts.Validation == result.ValidationClient {
		r.progress("validating %d object(s) against the Kubernetes %s schemas", len(objs), validate.KubernetesVersion)
		if err := validate.Client(objs, rendered.Sources); err != nil {
			return r.fail(ctx, failure(result.ReasonValidationFailed, err))
		}
	}
	r.mgr.SetOwnerLabels(objs, opts.Name, r.ns)
	aopts := apply.Options{Force: opts.Force, WaitTimeout: opts.Timeout, Sources: rendered.Sources}

	desired := entriesOf(objs)
	untouched := r.untouched(ctx, desired)
	work := without(objs, untouched)
	if opts.Validation == result.ValidationServer {
		r.progress("validating %d object(s) with a server-side dry-run", len(work))
	} else {
		r.progress("dry-running %d object(s)", len(work))
	}
	plan, err := apply.DryRun(ctx, r.mgr, work, aopts)
	if err == nil {
		err = r.checkUnverified(plan, rendered.Sources)
	}
	if err != nil {
		r.res.Entries = append(r.res.Entries, failedEntries(plan)...)
		return r.fail(ctx, failure(r.dryRunReason(), err))
	}

	// Phase one: own the union before touching anything, so a crash between
	// apply and prune never leaves an object nobody owns.
	var old []inventory.Entry
	if r.prev != nil {
		old = r.prev.Entries
	}
	if err := r.saveInventory(ctx, inventory.Union(old, desired), r.status(result.ReasonProgressing, "applying", false)); err != nil {
		return r.fail(ctx, failure(result.ReasonApplyFailed, err))
	}

	r.progress("applying %d object(s)", countWrites(plan))
	r.res.Entries = append(r.res.Entries, untouchedEntries(objs, untouched, rendered.Sources)...)
	out, err := apply.Execute(ctx, r.mgr, plan, aopts)
	r.res.Entries = append(r.res.Entries, out.Entries...)
	if err != nil {
		return r.fail(ctx, failure(result.ReasonApplyFailed, err))
	}
	desired = withVersions(desired, untouched, out.ResourceVersions)
	r.appliedAt = out.AppliedAt
	waitFor := append(appliedIDs(r.res.Entries), opts.HealthChecks...)

	keep := desired
	if opts.Prune {
		stale := inventory.Diff(old, desired)
		if len(stale) > 0 {
			r.progress("pruning %d object(s) no longer in the build", len(stale))
		}
		pruned, err := prune.Run(ctx, r.actor, r.mgr, stale, prune.Options{OwnerLabels: r.mgr.GetOwnerLabels(opts.Name, r.ns)})
		if pruned != nil {
			r.res.Entries = append(r.res.Entries, pruned.Entries...)
			keep = inventory.Union(desired, undesired(pruned.Keep))
		}
		if err == nil {
			err = pruneFailures(pruned)
		}
		if err != nil {
			_ = r.saveInventory(ctx, inventory.Union(undesired(old), desired), nil)
			return r.fail(ctx, failure(result.ReasonPruneFailed, err))
		}
	} else {
		// Without pruning, objects that left the build stay owned.
		keep = inventory.Union(undesired(old), desired)
	}
	if err := r.saveInventory(ctx, keep, nil); err != nil {
		return r.fail(ctx, failure(result.ReasonApplyFailed, err))
	}

	return r.waitAndSucceed(ctx, waitFor)
}

// waitAndSucceed waits for ids to become ready, if asked to, and ends the
// run.
func (r *run) waitAndSucceed(ctx context.Context, ids []object.ID) (*result.Result, error) {
	if r.opts.Wait {
		r.progress("waiting up to %s for %d object(s) to become ready", r.opts.Timeout, len(ids))
		if err := health.Wait(ctx, r.actor, ids, health.Options{Timeout: r.opts.Timeout, Progress: r.opts.Progress}); err != nil {
			return r.fail(ctx, failure(result.ReasonHealthCheckFailed, err))
		}
		r.settle(ctx, ids)
	}
	return r.succeed(ctx, fmt.Sprintf("applied revision %s", revisionOr(r.opts.Revision)))
}

func pruneFailures(out *prune.Outcome) error {
	if out == nil {
		return nil
	}
	var errs []error
	for _, e := range out.Entries {
		if e.Action == result.Failed {
			errs = append(errs, fmt.Errorf("deleting %s: %s", e.Object, e.Reason))
		}
	}
	return errors.Join(errs...)
}

// entriesOf returns the inventory entries of objs, with their manifest
// digests, except for Secrets: a digest of a Secret's values, kept in the
// inventory, would let whoever can read the inventory guess a weak value
// offline. Secrets are therefore always dry-run.
func entriesOf(objs []*unstructured.Unstructured) []inventory.Entry {
	out := make([]inventory.Entry, len(objs))
	for i, u := range objs {
		out[i] = inventory.Entry{ID: object.IDOf(u), Version: u.GetAPIVersion()}
		if !utils.IsSecret(u) {
			out[i].Digest = object.Digest(u)
		}
	}
	return out
}

// appliedIDs are the objects to wait for: everything applied, not what
// ssa: Ignore (or IfNotPresent on a missing object) skipped, nor the kinds
// kstatus calls ready as soon as they exist (they were just applied), so
// a unit of thousands of ConfigMaps does not list them all on every poll.
func appliedIDs(entries []result.Entry) []object.ID {
	var out []object.ID
	for _, e := range entries {
		if e.Action != result.Skipped && !health.ReadyOnceApplied(e.Object) {
			out = append(out, e.Object)
		}
	}
	return out
}

func revisionOr(rev string) string {
	if rev == "" {
		return "(unknown)"
	}
	return rev
}

var now = time.Now
