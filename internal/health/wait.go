// Package health waits for applied objects to become ready, as kstatus
// judges them, and says which are not and why.
package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/collector"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	cliobject "github.com/fluxcd/cli-utils/pkg/object"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Options tune Wait.
type Options struct {
	Timeout time.Duration
	// Interval between status polls; 0 means 500ms.
	Interval time.Duration
	// Progress receives a line about what is still not ready every
	// ProgressEvery (0 means 5s); nil discards.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// Unready is an object that did not become ready, with kstatus's verdict.
type Unready struct {
	Object  object.ID
	Status  string
	Message string
	// Pods lists the workload's pods that are not ready and why.
	Pods []string
}

func (u Unready) String() string {
	s := fmt.Sprintf("%s: %s", u.Object, u.Status)
	if u.Message != "" {
		s += ": " + u.Message
	}
	if len(u.Pods) > 0 {
		s += " (" + strings.Join(u.Pods, "; ") + ")"
	}
	return s
}

// NotReadyError lists every object that was not ready when the wait ended.
type NotReadyError struct {
	TimedOut bool
	Timeout  time.Duration
	Unready  []Unready
}

func (e *NotReadyError) Error() string {
	var b strings.Builder
	if e.TimedOut {
		fmt.Fprintf(&b, "timeout after %s waiting for %d object(s) to become ready:", e.Timeout, len(e.Unready))
	} else {
		fmt.Fprintf(&b, "%d object(s) failed:", len(e.Unready))
	}
	for _, u := range e.Unready {
		b.WriteString("\n  - " + u.String())
	}
	return b.String()
}

// ReadyOnceApplied reports whether kstatus judges id's kind ready as soon
// as it exists (ConfigMaps, Secrets, CronJobs: its alwaysReady kinds), so
// that waiting for one just applied can only confirm what the apply did.
func ReadyOnceApplied(id object.ID) bool {
	switch id.Group + "/" + id.Kind {
	case "/ConfigMap", "/Secret", "batch/CronJob":
		return true
	}
	return false
}

// Wait polls ids until every one is Current (ready), one has Failed and
// the rest are settled, or the timeout passes.
func Wait(ctx context.Context, c *kube.Clients, ids []object.ID, opts Options) error {
	if len(ids) == 0 {
		return nil
	}
	if opts.Interval <= 0 {
		opts.Interval = 500 * time.Millisecond
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 5 * time.Second
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	set := make(cliobject.ObjMetadataSet, len(ids))
	for i, id := range ids {
		set[i] = cliobject.ObjMetadata{GroupKind: schema.GroupKind{Group: id.Group, Kind: id.Kind}, Namespace: id.Namespace, Name: id.Name}
	}
	poller := polling.NewStatusPoller(c.Client, c.Mapper, polling.Options{})
	coll := collector.NewResourceStatusCollector(set)
	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	var mu sync.Mutex
	settled := false
	var waiting []string // not ready yet, as of the last event
	done := coll.ListenWithObserver(poller.Poll(wctx, set, polling.PollOptions{PollInterval: opts.Interval}),
		collector.ObserverFunc(func(sc *collector.ResourceStatusCollector, _ event.Event) {
			mu.Lock()
			defer mu.Unlock()
			waiting = waiting[:0]
			for _, rs := range sc.ResourceStatuses {
				switch {
				case rs == nil:
					waiting = append(waiting, "(unknown)")
				case rs.Status == status.CurrentStatus, rs.Status == status.FailedStatus:
				default:
					waiting = append(waiting, fmt.Sprintf("%s (%s)", fmtID(rs.Identifier), rs.Status))
				}
			}
			if len(waiting) == 0 {
				settled = true
				cancel()
			}
		}))
	// The poller reports changes only, so progress runs on its own clock.
	start := time.Now()
	tick := time.NewTicker(opts.ProgressEvery)
	defer tick.Stop()
	go func() {
		for {
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
				mu.Lock()
				w := append([]string(nil), waiting...)
				mu.Unlock()
				if len(w) == 0 {
					continue
				}
				sort.Strings(w)
				n := len(w)
				if n > 5 {
					w = append(w[:5], fmt.Sprintf("and %d more", n-5))
				}
				fmt.Fprintf(opts.Progress, "waiting for %d of %d object(s) to become ready (%s): %s\n",
					n, len(set), time.Since(start).Round(time.Second), strings.Join(w, ", "))
			}
		}
	}()
	<-done
	if ctx.Err() != nil {
		return ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	// A poll cut short by the deadline (e.g. the client's rate limiter
	// refusing to wait past it) is the timeout itself, not a failure to
	// read status: report what was not ready.
	if coll.Error != nil && !nearDeadline(wctx, opts.Interval) && !errors.Is(coll.Error, context.Canceled) {
		return fmt.Errorf("polling status: %w", coll.Error)
	}
	var unready []Unready
	for id, rs := range coll.ResourceStatuses {
		switch {
		case rs == nil:
			unready = append(unready, Unready{Object: toID(id), Status: "Unknown", Message: "status could not be read"})
		case rs.Status != status.CurrentStatus:
			u := Unready{Object: toID(id), Status: rs.Status.String(), Message: rs.Message}
			if rs.Error != nil {
				u.Message = rs.Error.Error()
			}
			u.Pods = unreadyPods(ctx, c, rs)
			unready = append(unready, u)
		}
	}
	if len(unready) == 0 {
		return nil
	}
	sort.Slice(unready, func(i, j int) bool { return unready[i].Object.Less(unready[j].Object) })
	return &NotReadyError{TimedOut: !settled, Timeout: opts.Timeout, Unready: unready}
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
