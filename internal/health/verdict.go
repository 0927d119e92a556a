package health

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	cliobject "github.com/fluxcd/cli-utils/pkg/object"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

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

// NotReadyError lists every object that was not ready when the wait
// ended: those no controller ever observed apart from the rest, which are
// merely slow or failed.
type NotReadyError struct {
	TimedOut bool
	Timeout  time.Duration
	Unready  []Unready
	// Unobserved are objects no controller observed while the wait
	// lasted, Waited.
	Unobserved []Unready
	Waited     time.Duration
	// Diagnostics say what the cluster said about the objects of Unready
	// (see Diagnose).
	Diagnostics []result.Diagnostic
}

func (e *NotReadyError) Error() string {
	var b strings.Builder
	switch {
	case len(e.Unready) == 0:
	case e.TimedOut:
		fmt.Fprintf(&b, "timeout after %s waiting for %d object(s) to become ready:", e.Timeout, len(e.Unready))
	default:
		fmt.Fprintf(&b, "%d object(s) failed:", len(e.Unready))
	}
	for _, u := range e.Unready {
		b.WriteString("\n  - " + u.String())
		for _, d := range e.Diagnostics {
			if d.Object == u.Object {
				for _, l := range d.Lines() {
					b.WriteString("\n      " + l)
				}
			}
		}
	}
	if len(e.Unobserved) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(unobservedHeader(len(e.Unobserved), e.Waited))
		for _, l := range unobservedLines(e.Unobserved) {
			b.WriteString("\n  - " + l)
		}
	}
	return b.String()
}

// unreadyObjects lists, in ID order, the objects whose last status is not
// Current, with the unready pods of workloads read from the cluster; those
// no controller ever observed apart.
func unreadyObjects(ctx context.Context, c *kube.Clients, statuses map[cliobject.ObjMetadata]*event.ResourceStatus) (unready, unobservedObjs []Unready) {
	for id, rs := range statuses {
		switch {
		case rs == nil:
			unready = append(unready, Unready{Object: toID(id), Status: "Unknown", Message: "status could not be read"})
		case unobserved(rs):
			unobservedObjs = append(unobservedObjs, Unready{Object: toID(id), Status: rs.Status.String(), Message: rs.Message})
		case rs.Status != status.CurrentStatus:
			u := Unready{Object: toID(id), Status: rs.Status.String(), Message: rs.Message}
			if rs.Error != nil {
				u.Message = rs.Error.Error()
			}
			u.Pods = unreadyPods(ctx, c, rs)
			unready = append(unready, u)
		}
	}
	for _, list := range [][]Unready{unready, unobservedObjs} {
		sort.Slice(list, func(i, j int) bool { return list[i].Object.Less(list[j].Object) })
	}
	return unready, unobservedObjs
}

// DiagnosedError is an error (a hook that failed) with what the cluster
// said about the objects involved.
type DiagnosedError struct {
	Err         error
	Diagnostics []result.Diagnostic
}

func (e *DiagnosedError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	for _, d := range e.Diagnostics {
		for _, l := range d.Lines() {
			b.WriteString("\n    " + l)
		}
	}
	return b.String()
}

func (e *DiagnosedError) Unwrap() error { return e.Err }

// DiagnosticsOf are the diagnostics err carries, if any: those of a
// NotReadyError or a DiagnosedError it wraps.
func DiagnosticsOf(err error) []result.Diagnostic {
	var nr *NotReadyError
	if errors.As(err, &nr) {
		return nr.Diagnostics
	}
	var de *DiagnosedError
	if errors.As(err, &de) {
		return de.Diagnostics
	}
	return nil
}
