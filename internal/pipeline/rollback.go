package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/checkout"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
)

// ErrNoRollback says a unit's history holds no revision to roll back to.
var ErrNoRollback = errors.New("nothing to roll back to")

// Rollback makes opts, the options of an apply of the unit, those of an
// apply of revision to of the unit's history again (0: the last that
// ended ready before the one applied now): the unit as it is at that
// revision's commit, checked out with opts.At (the commit must be in the
// checkout), recorded as that revision and as a rollback of it. Nothing
// of the revision was stored but its commit: the unit is rendered again
// there, with this run's keys and substitutions. It returns the revision
// chosen; applying an older commit still needs AllowRollback.
func Rollback(ctx context.Context, c *kube.Clients, opts Options, to int) (Options, inventory.Revision, error) {
	ns := c.NamespaceOr(opts.InventoryNamespace)
	inv, err := inventory.Load(ctx, c.Client, ns, opts.Name)
	if err != nil {
		return opts, inventory.Revision{}, err
	}
	if inv == nil {
		return opts, inventory.Revision{}, fmt.Errorf("unit '%s' has no inventory in namespace %s: %w", opts.Name, ns, ErrNoRollback)
	}
	if inv.Status.Config != "" && opts.Config == "" {
		// Its options (target namespace, patches, substitutions...) are
		// its Kustomization's: applied on its own, it would lose them.
		return opts, inventory.Revision{}, fmt.Errorf("unit '%s' is a unit of the configuration %s: rolling back one unit of a configuration is not supported yet (roll the configuration's commit back instead)", opts.Name, inv.Status.Config)
	}
	rev, err := rollbackTarget(inv.Status, to)
	if err != nil {
		return opts, rev, fmt.Errorf("unit '%s': %w", opts.Name, err)
	}
	if opts.At == nil {
		return opts, rev, fmt.Errorf("unit '%s': revision %d (%s) cannot be checked out here", opts.Name, rev.Revision, checkout.Short(rev.SourceRevision))
	}
	dir, err := opts.At(ctx, rev.SourceRevision, opts.Dir)
	if err != nil {
		return opts, rev, fmt.Errorf("unit '%s': revision %d: %w", opts.Name, rev.Revision, err)
	}
	if dir == nil {
		return opts, rev, fmt.Errorf("unit '%s': revision %d: the unit's directory %s does not exist at commit %s", opts.Name, rev.Revision, opts.Dir.Rel, checkout.Short(rev.SourceRevision))
	}
	opts.Dir, opts.Snapshot = *dir, nil
	opts.Revision, opts.RollbackOf = rev.SourceRevision, rev.Revision
	opts.RevisionTime = time.Time{}
	if at, err := checkout.Git(ctx, dir.Path, "show", "-s", "--format=%cI", rev.SourceRevision); err == nil {
		opts.RevisionTime, _ = time.Parse(time.RFC3339, at)
	}
	return opts, rev, nil
}

// rollbackTarget is revision to of st's history, or with 0 the last that
// ended ready with another commit than the one applied now.
func rollbackTarget(st inventory.Status, to int) (inventory.Revision, error) {
	if to == 0 {
		rev, ok := st.PreviousReady()
		if !ok {
			return rev, fmt.Errorf("no revision of its history (%s) ended ready with a commit other than the one applied now: %w", historyRange(st), ErrNoRollback)
		}
		return rev, nil
	}
	rev, ok := st.Find(to)
	switch {
	case !ok:
		return rev, fmt.Errorf("revision %d is not in its history (%s): %w", to, historyRange(st), ErrNoRollback)
	case rev.SourceRevision == "":
		return rev, fmt.Errorf("revision %d recorded no commit: %w", to, ErrNoRollback)
	}
	return rev, nil
}

// historyRange says which revisions a history holds.
func historyRange(st inventory.Status) string {
	switch n := len(st.History); n {
	case 0:
		return "empty"
	case 1:
		return fmt.Sprintf("revision %d", st.History[0].Revision)
	default:
		return fmt.Sprintf("revisions %d to %d", st.History[0].Revision, st.History[n-1].Revision)
	}
}
