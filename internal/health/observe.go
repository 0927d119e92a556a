package health

import (
	"context"
	"fmt"
	"sync"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/collector"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	cliobject "github.com/fluxcd/cli-utils/pkg/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// observer keeps, after every status event, what is still not ready, for
// the progress lines, and ends the wait early once nothing is.
type observer struct {
	settle context.CancelFunc // called once nothing is left to wait for

	mu      sync.Mutex
	pending []string // not ready yet, as of the last event
	settled bool
}

var _ collector.Observer = (*observer)(nil)

// Notify runs on the collector's goroutine after each event.
func (o *observer) Notify(sc *collector.ResourceStatusCollector, _ event.Event) {
	pending := stillWaiting(sc.ResourceStatuses)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pending = pending
	if len(pending) == 0 {
		o.settled = true
		o.settle()
	}
}

// waiting returns a copy of what was not ready at the last event.
func (o *observer) waiting() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.pending...)
}

// isSettled reports whether every object reached Current or Failed.
func (o *observer) isSettled() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.settled
}

// stillWaiting names the objects neither Current nor Failed, with their
// status; Failed ones are not waited for, as they will not recover alone,
// and neither are those whose status this identity may not read (RBAC
// does not change during a wait: the verdict names the missing right).
func stillWaiting(statuses map[cliobject.ObjMetadata]*event.ResourceStatus) []string {
	var out []string
	for _, rs := range statuses {
		switch {
		case rs == nil:
			out = append(out, "(unknown)")
		case rs.Status == status.CurrentStatus, rs.Status == status.FailedStatus, unreadable(rs):
		default:
			out = append(out, fmt.Sprintf("%s (%s)", fmtID(rs.Identifier), rs.Status))
		}
	}
	return out
}

// unreadable reports whether reading rs's status was refused.
func unreadable(rs *event.ResourceStatus) bool {
	return rs.Error != nil && (apierrors.IsForbidden(rs.Error) || apierrors.IsUnauthorized(rs.Error))
}
