package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// checkDependencies fails with DependencyNotReady unless every unit in
// DependsOn has an inventory whose last attempt ended Ready.
func (r *run) checkDependencies(ctx context.Context) error {
	var errs []error
	for _, dep := range r.opts.DependsOn {
		inv, err := r.cl.store.Load(ctx, r.ns, dep)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("dependency '%s': %w", dep, err))
		case inv == nil:
			errs = append(errs, fmt.Errorf("dependency '%s' has no inventory in namespace %s: apply it first", dep, r.ns))
		case inv.Status.Ready.Status != "True":
			errs = append(errs, fmt.Errorf("dependency '%s' is not ready (%s: %s)", dep, inv.Status.Ready.Reason, inv.Status.Ready.Message))
		}
	}
	if len(errs) > 0 {
		return failure(result.ReasonDependencyNotReady, errors.Join(errs...))
	}
	return nil
}
