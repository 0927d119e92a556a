package health

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	cliobject "github.com/fluxcd/cli-utils/pkg/object"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
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

// unreadyObjects lists, in ID order, the objects whose last status is not
// Current, with the unready pods of workloads read from the cluster.
func unreadyObjects(ctx context.Context, c *kube.Clients, statuses map[cliobject.ObjMetadata]*event.ResourceStatus) []Unready {
	var unready []Unready
	for id, rs := range statuses {
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
	sort.Slice(unready, func(i, j int) bool { return unready[i].Object.Less(unready[j].Object) })
	return unready
}
