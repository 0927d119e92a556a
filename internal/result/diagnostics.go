package result

import (
	"fmt"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Diagnostic is what the cluster itself says about an object that did
// not become ready (or a hook that failed): the Warning events of the
// object and of what it owns (ReplicaSets, Pods, PersistentVolumeClaims),
// the state of its pods' containers, and the last lines a failing
// container printed: what `kubectl describe` and `kubectl logs` would
// show, read once the wait ended.
type Diagnostic struct {
	Object object.ID `json:"object"`
	// Events are Warning events, most recent first, the same reason and
	// message on several objects counted once.
	Events []Event `json:"events,omitempty"`
	// Containers are the containers of its pods that are not ready.
	Containers []ContainerState `json:"containers,omitempty"`
	// Logs are the last lines of failing containers.
	Logs []LogTail `json:"logs,omitempty"`
	// Notes say what could not be read, and why (e.g. no right to list
	// events): a diagnosis is best effort, never a failure.
	Notes []string `json:"notes,omitempty"`
}

// Event is a Warning event, as the Kubernetes Event API records it.
type Event struct {
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Count is how many times it was seen, on all of Objects.
	Count int32 `json:"count"`
	// Objects are the objects it was recorded on: Kind/name.
	Objects []string `json:"objects"`
}

// ContainerState is a container that is not ready, as its pod's status
// says.
type ContainerState struct {
	Pod       string `json:"pod"`
	Container string `json:"container"`
	Init      bool   `json:"init,omitempty"`
	// State is waiting, running or terminated; Reason, Message and
	// ExitCode are the state's.
	State    string `json:"state"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
	ExitCode *int32 `json:"exitCode,omitempty"`
	// LastReason and LastExitCode are those of the instance before, when
	// it terminated (a crash before a restart).
	LastReason   string `json:"lastReason,omitempty"`
	LastExitCode *int32 `json:"lastExitCode,omitempty"`
	Restarts     int32  `json:"restarts"`
}

// LogTail is the end of a container's log.
type LogTail struct {
	Pod       string `json:"pod"`
	Container string `json:"container"`
	// Previous says the lines are the previous instance's: the one that
	// crashed before the container restarted.
	Previous bool     `json:"previous,omitempty"`
	Lines    []string `json:"lines"`
}

// Title names the log: its pod and container, and which instance.
func (l LogTail) Title() string {
	s := fmt.Sprintf("log of Pod/%s container %s", l.Pod, l.Container)
	if l.Previous {
		s += " (previous instance)"
	}
	return s
}

// Lines say, one line each, what the cluster said about d's object:
// events, then containers, then notes (logs are rendered apart: they are
// longer, and folded in markdown).
func (d Diagnostic) Lines() []string {
	var out []string
	for _, e := range d.Events {
		out = append(out, e.String())
	}
	for _, c := range d.Containers {
		out = append(out, c.String())
	}
	for _, n := range d.Notes {
		out = append(out, "note: "+n)
	}
	return out
}

func (e Event) String() string {
	s := e.Type + " " + e.Reason
	if e.Count > 1 {
		s += fmt.Sprintf(" (x%d)", e.Count)
	}
	if len(e.Objects) > 0 {
		s += " on " + object.Few(e.Objects)
	}
	return s + ": " + e.Message
}

func (c ContainerState) String() string {
	kind := "container"
	if c.Init {
		kind = "init container"
	}
	s := fmt.Sprintf("Pod/%s %s %s: %s", c.Pod, kind, c.Container, c.State)
	if c.Reason != "" {
		s += " " + c.Reason
	}
	if c.ExitCode != nil {
		s += fmt.Sprintf(", exit code %d", *c.ExitCode)
	}
	if c.Message != "" {
		s += " (" + oneLine(c.Message) + ")"
	}
	if c.LastExitCode != nil {
		s += fmt.Sprintf("; last instance terminated: %s, exit code %d", cmpOr(c.LastReason, "Error"), *c.LastExitCode)
	}
	if c.Restarts > 0 {
		s += fmt.Sprintf("; %d restarts", c.Restarts)
	}
	return s
}

// Mask replaces, through mask, every text of d a secret value could be in.
func (d *Diagnostic) Mask(mask func(string) string) {
	d.Object.Name, d.Object.Namespace = mask(d.Object.Name), mask(d.Object.Namespace)
	for i := range d.Events {
		e := &d.Events[i]
		e.Message = mask(e.Message)
		for j, o := range e.Objects {
			e.Objects[j] = mask(o)
		}
	}
	for i := range d.Containers {
		c := &d.Containers[i]
		c.Message, c.Pod = mask(c.Message), mask(c.Pod)
	}
	for i := range d.Logs {
		l := &d.Logs[i]
		l.Pod = mask(l.Pod)
		for j, line := range l.Lines {
			l.Lines[j] = mask(line)
		}
	}
	for i, n := range d.Notes {
		d.Notes[i] = mask(n)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
