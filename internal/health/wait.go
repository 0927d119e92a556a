// Package health waits for applied objects to become ready, as kstatus
// judges them, and says which are not and why.
package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/collector"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	cliobject "github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// DefaultInterval is how often Wait reads the status of what it waits
// for. A wait ends on the poll after the last object became ready: at
// 500 ms, make bench's first deploys of 1,000 objects waited 1.03 s or
// 1.54 s for 10 Deployments, never in between, a quarter second lost on
// average in every wait. A poll costs a LIST per kind and namespace.
const DefaultInterval = 250 * time.Millisecond

// Options tune Wait.
type Options struct {
	Timeout time.Duration
	// Interval between status polls; 0 means DefaultInterval.
	Interval time.Duration
	// Progress receives a line about what is still not ready every
	// ProgressEvery (0 means 5s); nil discards.
	Progress      io.Writer
	ProgressEvery time.Duration
	// EventsEvery is how often Warning events are read, to say each new
	// one on Progress as it happens; 0 means 2s.
	EventsEvery time.Duration
	// ObserveGrace ends the wait once all it still waits for have been,
	// for that long, objects no controller has observed (a custom resource
	// whose controller is not running or not installed), rather than
	// waiting out the timeout for them; 0 means DefaultObserveGrace, or a
	// quarter of a shorter Timeout.
	ObserveGrace time.Duration
	// Evaluators judge the kinds they name by CEL expressions (Flux's
	// healthCheckExprs) instead of kstatus.
	Evaluators Evaluators
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 5 * time.Second
	}
	if o.EventsEvery <= 0 {
		o.EventsEvery = 2 * time.Second
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.ObserveGrace <= 0 {
		o.ObserveGrace = observeGrace(o.Timeout)
	}
	return o
}

// Observed is, for each object a wait found ready, the resourceVersion
// it had in the poll that found it so: what was judged, as opposed to
// what a later read may find.
type Observed map[object.ID]string

// Wait polls ids until every one is Current (ready), one has Failed and
// the rest are settled, all still waited for are objects no controller
// has observed for the grace, or the timeout passes. When every one is
// ready, it returns the versions it judged.
func Wait(ctx context.Context, c *kube.Clients, ids []object.ID, opts Options) (Observed, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	opts = opts.withDefaults()
	start := time.Now()
	set := metadataSet(ids)
	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	obs := &observer{settle: cancel, grace: opts.ObserveGrace}
	poller := polling.NewStatusPoller(c.Client, c.Mapper, polling.Options{CustomStatusReaders: opts.Evaluators.statusReaders(c.Mapper)})
	coll := collector.NewResourceStatusCollector(set)
	done := coll.ListenWithObserver(poller.Poll(wctx, set, polling.PollOptions{PollInterval: opts.Interval}), obs)
	progress := &lockedWriter{w: opts.Progress}
	stopProgress := startProgress(progress, opts.ProgressEvery, len(set), obs.waiting)
	stopWarnings := func() {}
	if opts.Progress != io.Discard {
		stopWarnings = startWarnings(wctx, c, ids, progress, opts.EventsEvery)
	}
	// done carries each poll error (coll.Error keeps the last) and closes
	// once the poller has stopped and the observer has seen every event.
	for range done {
	}
	stopWarnings()
	stopProgress()
	obs.stop()

	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// A poll cut short by the deadline (e.g. the client's rate limiter
	// refusing to wait past it) is the timeout itself, not a failure to
	// read status: report what was not ready.
	if coll.Error != nil && !nearDeadline(wctx, opts.Interval) && !errors.Is(coll.Error, context.Canceled) {
		return nil, fmt.Errorf("polling status: %w", coll.Error)
	}
	unready, unobserved := unreadyObjects(ctx, c, coll.ResourceStatuses)
	if len(unready)+len(unobserved) == 0 {
		return observedVersions(coll.ResourceStatuses), nil
	}
	gaveUp := obs.gaveUpOnUnobserved()
	var failing []object.ID
	for _, u := range unready {
		failing = append(failing, u.Object)
	}
	return nil, &NotReadyError{
		TimedOut: !obs.isSettled() && !gaveUp, Timeout: opts.Timeout, Unready: unready,
		Unobserved: unobserved, Waited: time.Since(start).Round(time.Second),
		Diagnostics: Diagnose(ctx, c, failing),
	}
}

// observedVersions reads the resourceVersion of each object in the poll
// that last reported it.
func observedVersions(statuses map[cliobject.ObjMetadata]*event.ResourceStatus) Observed {
	out := Observed{}
	for id, st := range statuses {
		if st == nil || st.Resource == nil {
			continue
		}
		out[object.ID{Group: id.GroupKind.Group, Kind: id.GroupKind.Kind, Namespace: id.Namespace, Name: id.Name}] = st.Resource.GetResourceVersion()
	}
	return out
}

func metadataSet(ids []object.ID) cliobject.ObjMetadataSet {
	set := make(cliobject.ObjMetadataSet, len(ids))
	for i, id := range ids {
		set[i] = cliobject.ObjMetadata{GroupKind: schema.GroupKind{Group: id.Group, Kind: id.Kind}, Namespace: id.Namespace, Name: id.Name}
	}
	return set
}

// nearDeadline reports whether ctx has ended or will within two poll
// intervals: client-go's rate limiter refuses to wait past a deadline and
// fails the last poll early, with an error that does not wrap it.
func nearDeadline(ctx context.Context, interval time.Duration) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < 2*interval
}

func toID(m cliobject.ObjMetadata) object.ID {
	return object.ID{Group: m.GroupKind.Group, Kind: m.GroupKind.Kind, Namespace: m.Namespace, Name: m.Name}
}

func fmtID(m cliobject.ObjMetadata) string { return toID(m).String() }

// lockedWriter serializes the progress and warning lines written from
// their own goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
