package health

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/collector"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	cliobject "github.com/fluxcd/cli-utils/pkg/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// observer keeps, after every status event, what is still not ready, for
// the progress lines, and ends the wait early once nothing is, or once
// all it still waits for have been, for grace, objects no controller has
// observed (see unobserved).
type observer struct {
	settle context.CancelFunc // called once nothing is left to wait for
	grace  time.Duration

	mu      sync.Mutex
	pending []string // not ready yet, as of the last event
	settled bool
	// idle counts grace down while only unobserved objects are waited
	// for; nil while anything else is. idleRun numbers the countdowns, so
	// that one stopped too late to keep it from firing does nothing.
	idle    *time.Timer
	idleRun int
	gaveUp  bool
}

var _ collector.Observer = (*observer)(nil)

// Notify runs on the collector's goroutine after each event.
func (o *observer) Notify(sc *collector.ResourceStatusCollector, _ event.Event) {
	pending := stillWaiting(sc.ResourceStatuses)
	idle := onlyUnobserved(sc.ResourceStatuses)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pending = pending
	switch {
	case len(pending) == 0:
		o.stopIdle()
		o.settled = true
		o.settle()
	case idle && o.idle == nil:
		o.idleRun++
		run := o.idleRun
		o.idle = time.AfterFunc(o.grace, func() { o.giveUp(run) })
	case !idle:
		o.stopIdle()
	}
}

// giveUp ends the wait when countdown run runs out: for grace, only
// objects no controller observed were waited for.
func (o *observer) giveUp(run int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.idle == nil || run != o.idleRun {
		return // stopped since: something else is waited for again
	}
	o.gaveUp = true
	o.settle()
}

// stopIdle ends the countdown, if any; mu must be held.
func (o *observer) stopIdle() {
	if o.idle != nil {
		o.idle.Stop()
		o.idle = nil
	}
}

// stop ends the countdown once the wait is over.
func (o *observer) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopIdle()
}

// gaveUpOnUnobserved reports whether the wait ended because only objects
// no controller observed were left, for the grace.
func (o *observer) gaveUpOnUnobserved() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gaveUp
}

// onlyUnobserved reports whether every object still waited for is one no
// controller has observed (and there is one).
func onlyUnobserved(statuses map[cliobject.ObjMetadata]*event.ResourceStatus) bool {
	n := 0
	for _, rs := range statuses {
		if rs == nil {
			return false
		}
		if waitedFor(rs) {
			if !unobserved(rs) {
				return false
			}
			n++
		}
	}
	return n > 0
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
		case unobserved(rs):
			out = append(out, fmt.Sprintf("%s (%s, not observed by any controller)", fmtID(rs.Identifier), rs.Status))
		case waitedFor(rs):
			out = append(out, fmt.Sprintf("%s (%s)", fmtID(rs.Identifier), rs.Status))
		}
	}
	return out
}

// waitedFor reports whether the wait goes on for rs (known, neither
// Current nor Failed, readable).
func waitedFor(rs *event.ResourceStatus) bool {
	return rs != nil && rs.Status != status.CurrentStatus && rs.Status != status.FailedStatus && !unreadable(rs)
}

// unreadable reports whether reading rs's status was refused.
func unreadable(rs *event.ResourceStatus) bool {
	return rs.Error != nil && (apierrors.IsForbidden(rs.Error) || apierrors.IsUnauthorized(rs.Error))
}
