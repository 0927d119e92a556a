package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// dependencyPoll is how often a dependency outside the run is looked at
// again while the run waits for it (see Options.WaitForDependencies).
var dependencyPoll = 2 * time.Second

// checkDependencies fails with DependencyNotReady unless every unit in
// DependsOn has an inventory whose last attempt ended Ready. With
// WaitForDependencies, a dependency (another job's unit, say) is waited
// for, that long at most, until it is Ready at this run's revision (or a
// newer one): its job may not have applied this commit yet.
func (r *run) checkDependencies(ctx context.Context) error {
	return r.dependencies(ctx, true)
}

// dependencies checks the dependencies as checkDependencies does; unless
// patient, it looks once and does not wait.
func (r *run) dependencies(ctx context.Context, patient bool) error {
	if len(r.opts.DependsOn) == 0 {
		return nil
	}
	wait := r.opts.WaitForDependencies
	deadline := time.Now().Add(wait)
	if !patient {
		deadline = time.Now()
	}
	lastSaid := time.Time{}
	for {
		var errs []error
		for _, dep := range r.opts.DependsOn {
			inv, err := r.loadDependency(ctx, dep)
			if err != nil {
				errs = append(errs, fmt.Errorf("dependency '%s': %w", dep, err))
				continue
			}
			if ready := r.opts.ReadyExprs[dep]; ready != nil && inv != nil {
				if err := ready(ctx, inv); err != nil {
					errs = append(errs, fmt.Errorf("dependency '%s' is not ready: %w", dep, err))
				}
				continue
			}
			if why := dependencyPending(inv, dep, r.ns, r.opts.Revision, r.opts.RevisionTime, wait > 0); why != "" {
				errs = append(errs, errors.New(why))
			}
		}
		if len(errs) == 0 {
			return nil
		}
		err := errors.Join(errs...)
		if wait <= 0 || !time.Now().Before(deadline) {
			if wait > 0 && patient {
				err = fmt.Errorf("after waiting %s (--wait-for-dependencies): %w", wait, err)
			}
			return failure(result.ReasonDependencyNotReady, err)
		}
		if time.Since(lastSaid) >= 30*time.Second {
			lastSaid = time.Now()
			r.progress("waiting up to %s for dependencies: %v", time.Until(deadline).Round(time.Second), err)
		}
		select {
		case <-ctx.Done():
			return failure(result.ReasonDependencyNotReady, fmt.Errorf("%w: %w", ctx.Err(), err))
		case <-time.After(dependencyPoll):
		}
	}
}

// loadDependency reads the inventory of dependency dep: where
// Options.Dependency says (another unit of the configuration, on its own
// cluster), else beside this unit's.
func (r *run) loadDependency(ctx context.Context, dep string) (*inventory.Inventory, error) {
	if r.opts.Dependency != nil {
		if inv, handled, err := r.opts.Dependency(ctx, dep); handled {
			return inv, err
		}
	}
	return r.cl.store.Load(ctx, r.ns, dep)
}

// dependencyPending says why the dependency dep, whose inventory (in
// namespace ns) is inv, is not yet one a run may go on after; "" when it
// is. Ready is enough, unless atRevision: then it must be Ready at rev,
// or at a revision committed after revTime (a newer commit was applied
// since). Without a revision to compare (rev empty), Ready is enough.
func dependencyPending(inv *inventory.Inventory, dep, ns, rev string, revTime time.Time, atRevision bool) string {
	newer := func() bool {
		t := inv.Status.LastAppliedRevisionTime
		return t != nil && !revTime.IsZero() && t.After(revTime)
	}
	switch {
	case inv == nil:
		return fmt.Sprintf("dependency '%s' has no inventory in namespace %s: apply it first", dep, ns)
	case inv.Status.Ready.Status != "True":
		return fmt.Sprintf("dependency '%s' is not ready (%s: %s)", dep, inv.Status.Ready.Reason, inv.Status.Ready.Message)
	case !atRevision || rev == "" || inv.Status.LastAppliedRevision == rev || newer():
		return ""
	}
	return fmt.Sprintf("dependency '%s' is ready at revision %s, not yet at %s", dep, or(inv.Status.LastAppliedRevision, "(none)"), rev)
}
