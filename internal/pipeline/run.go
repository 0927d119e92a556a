package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/fluxcd/pkg/ssa"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Failure is a failed run: the Flux reason it ends with and the cause.
type Failure struct {
	Reason result.Reason
	Err    error
}

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

func failure(reason result.Reason, err error) *Failure { return &Failure{Reason: reason, Err: err} }

// run is the state of one unit's run.
type run struct {
	c     *kube.Clients // the caller's identity: inventories
	actor *kube.Clients // applies, prunes and waits; impersonated if asked
	mgr   *ssa.ResourceManager
	opts  Options
	ns    string
	prev  *inventory.Inventory
	res   *result.Result
	start time.Time
	// inputs are what this run's build read; recorded once it succeeds.
	inputs *inventory.Inputs
	// appliedAt says when each object this run applied was applied.
	appliedAt map[object.ID]time.Time
	// write is false in diff mode: nothing may be written to the cluster.
	write bool
}

func newRun(c *kube.Clients, opts Options, mode result.Mode) *run {
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	start := now()
	return &run{
		c: c, actor: c, opts: opts, start: start, write: mode.Writes(),
		res: &result.Result{Unit: opts.Name, Mode: mode, Revision: opts.Revision, StartedAt: start.UTC(), Entries: []result.Entry{}},
	}
}

// begin prepares the run and loads the unit's last inventory into r.prev;
// failing to read it ends the run with reason.
func (r *run) begin(ctx context.Context, reason result.Reason) error {
	if err := r.prepare(ctx); err != nil {
		return err
	}
	prev, err := inventory.Load(ctx, r.c.Client, r.ns, r.opts.Name)
	if err != nil {
		return failure(reason, err)
	}
	r.prev = prev
	return nil
}

// prepare validates options and sets up the identity that applies.
func (r *run) prepare(ctx context.Context) error {
	if err := inventory.ValidateName(r.opts.Name); err != nil {
		return failure(result.ReasonArtifactFailed, err)
	}
	r.ns = r.opts.InventoryNamespace
	if r.ns == "" {
		r.ns = r.c.Namespace
	}
	if r.opts.ServiceAccount != "" {
		actor, err := r.c.Impersonate(r.ns, r.opts.ServiceAccount)
		if err != nil {
			return failure(result.ReasonApplyFailed, err)
		}
		r.actor = actor
	}
	r.mgr = apply.NewManager(r.actor)
	return nil
}

func (r *run) progress(format string, args ...any) {
	fmt.Fprintf(r.opts.Progress, format+"\n", args...)
}

func (r *run) status(reason result.Reason, message string, ready bool) *inventory.Status {
	st := inventory.Status{LastAttemptedRevision: r.opts.Revision}
	if r.prev != nil {
		st.LastAppliedRevision = r.prev.Status.LastAppliedRevision
	}
	cond := "False"
	if ready {
		cond = "True"
		st.LastAppliedRevision = r.opts.Revision
	}
	if reason == result.ReasonProgressing {
		cond = "Unknown"
	}
	st.Ready = inventory.Condition{Status: cond, Reason: reason, Message: message, LastTransitionTime: now().UTC()}
	return &st
}

// saveInventory writes entries, and the status if given (else keeps the
// last one written). Nothing is written in diff mode.
func (r *run) saveInventory(ctx context.Context, entries []inventory.Entry, st *inventory.Status) error {
	if !r.write {
		return nil
	}
	inv := &inventory.Inventory{Name: r.opts.Name, Namespace: r.ns, Entries: entries}
	switch {
	case st != nil:
		inv.Status = *st
	case r.prev != nil:
		inv.Status = r.prev.Status
	}
	if inv.Status.Ready.Status == "True" {
		inv.Inputs = r.inputs
	}
	if err := inventory.Save(ctx, r.c.Client, inv); err != nil {
		return err
	}
	r.prev = inv
	return nil
}

// fail ends the run with err's reason and records the attempt.
func (r *run) fail(ctx context.Context, err error) (*result.Result, error) {
	var f *Failure
	if !errors.As(err, &f) {
		f = failure(result.ReasonApplyFailed, err)
	}
	r.res.Ready, r.res.Reason, r.res.Message = false, f.Reason, f.Err.Error()
	r.finish()
	if r.write && r.ns != "" && f.Reason != result.ReasonArtifactFailed {
		var entries []inventory.Entry
		if r.prev != nil {
			entries = r.prev.Entries
		}
		if serr := r.saveInventory(context.WithoutCancel(ctx), entries, r.status(f.Reason, f.Err.Error(), false)); serr != nil {
			return r.res, fmt.Errorf("%w (and recording the failure in the inventory failed too: %v)", err, serr)
		}
	}
	return r.res, err
}

func (r *run) succeed(ctx context.Context, message string) (*result.Result, error) {
	r.res.Ready, r.res.Reason, r.res.Message = true, result.ReasonApplySucceed, message
	r.finish()
	if r.write {
		entries := r.prev.Entries
		if err := r.saveInventory(ctx, entries, r.status(result.ReasonApplySucceed, message, true)); err != nil {
			return r.fail(ctx, failure(result.ReasonApplyFailed, err))
		}
	}
	return r.res, nil
}

func (r *run) finish() {
	r.res.Tally()
	r.res.Duration = now().Sub(r.start).Round(time.Millisecond).String()
}
