package pipeline

import (
	"fmt"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// skipped ends the run early, on purpose, when the unit is suspended, is
// pinned to another revision, or (when applying) last applied a newer
// commit than this run's: a slow run never rolls back a newer deploy. The
// result keeps the unit's last Ready state, so its dependents still run if
// it was ready; nothing is written.
func (r *run) skipped() (*result.Result, bool) {
	st := r.lastStatus()
	switch {
	case r.opts.Suspend:
		return r.skip(result.ReasonSuspended, "suspended (spec.suspend): not run")
	case st.Suspended:
		return r.skip(result.ReasonSuspended, "suspended: not run until resumed")
	case st.Pinned != "" && st.Pinned != r.opts.Revision:
		return r.skip(result.ReasonPinned, fmt.Sprintf("pinned to revision %s: revision %s is not applied until it is unpinned", st.Pinned, revisionOr(r.opts.Revision)))
	case r.mode == result.ModeApply && r.olderThanApplied():
		return r.skip(result.ReasonOutOfOrder, fmt.Sprintf("revision %s (committed %s) is older than the applied revision %s (committed %s): refused, so that a slow run never rolls back a newer deploy; allow rollbacks to apply it",
			revisionOr(r.opts.Revision), stamp(r.opts.RevisionTime), st.LastAppliedRevision, stamp(*st.LastAppliedRevisionTime)))
	}
	return nil, false
}

// olderThanApplied reports whether this run's revision was committed
// before the last applied one, when both times are known and rollbacks
// are not allowed.
func (r *run) olderThanApplied() bool {
	st := r.lastStatus()
	return !r.opts.AllowRollback && st.LastAppliedRevisionTime != nil && !r.opts.RevisionTime.IsZero() &&
		r.opts.Revision != st.LastAppliedRevision && r.opts.RevisionTime.Before(*st.LastAppliedRevisionTime)
}

func (r *run) skip(reason result.Reason, message string) (*result.Result, bool) {
	r.res.Ready = r.last != nil && r.last.Status.Ready.Status == "True"
	r.res.Reason, r.res.Message = reason, message
	r.finish()
	return r.res, true
}

// lastStatus is the status of the inventory as found; zero for a unit
// that never ran.
func (r *run) lastStatus() (st inventory.Status) {
	if r.last != nil {
		st = r.last.Status
	}
	return st
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
