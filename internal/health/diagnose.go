package health

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// Bounds of a diagnosis: it runs once a wait has failed, so it reads
// what a person would (kubectl describe, kubectl logs) for a few objects,
// not everything.
const (
	maxDiagnosed = 10 // objects diagnosed per failure
	maxEvents    = 8  // distinct events per object
	maxPods      = 3  // pods whose containers are listed, per object
	maxLogs      = 2  // logs read, per object
	maxOwned     = 20 // objects (pods, ReplicaSets, claims) whose events are read
	// LogLines is how many lines of a failing container's log are shown.
	LogLines = 20
	logBytes = 16 << 10 // read at most, per log
	lineMax  = 512      // bytes of one log line shown
	// diagnoseTimeout bounds the whole diagnosis: a slow API server
	// delays the verdict by no more.
	diagnoseTimeout = 20 * time.Second
)

// Diagnose reads, for each object of ids (the first maxDiagnosed), what
// the cluster says about why it is not ready: its Warning events and
// those of what it owns (ReplicaSets, Pods, PersistentVolumeClaims), the
// state of its pods' containers that are not ready, and the last lines of
// a failing container's log (the previous instance's after a crash).
// What it may not read (RBAC) becomes a note, never an error; objects it
// has nothing to say about are left out.
func Diagnose(ctx context.Context, c *kube.Clients, ids []object.ID) []result.Diagnostic {
	if c == nil || c.Config == nil || c.Client == nil || len(ids) == 0 {
		return nil
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	d := &diagnoser{c: c, logs: clientsetLogs{cs}, events: clientsetEvents{cs}}
	var out []result.Diagnostic
	for _, id := range ids[:min(len(ids), maxDiagnosed)] {
		if diag := d.diagnose(ctx, id); len(diag.Events)+len(diag.Containers)+len(diag.Logs)+len(diag.Notes) > 0 {
			out = append(out, diag)
		}
	}
	return out
}

// diagnoser reads what a diagnosis needs through small interfaces, so
// that the rules are table-tested without a cluster.
type diagnoser struct {
	c      *kube.Clients
	logs   logReader
	events eventLister
}

type logReader interface {
	// Tail is the end of a container's log: at most lines lines and
	// bytes bytes.
	Tail(ctx context.Context, ns, pod, container string, previous bool, lines, bytes int64) ([]byte, error)
}

type eventLister interface {
	// Warnings are the Warning events recorded on the object uid.
	Warnings(ctx context.Context, ns string, uid types.UID) ([]corev1.Event, error)
}

func (d *diagnoser) diagnose(ctx context.Context, id object.ID) result.Diagnostic {
	diag := result.Diagnostic{Object: id}
	live, err := d.get(ctx, id)
	if err != nil {
		return diag // gone, or unreadable: the verdict says so
	}
	pods, owned, notes := d.owned(ctx, live)
	diag.Notes = append(diag.Notes, notes...)
	uids := append([]related{{uid: live.GetUID(), name: id.Kind + "/" + id.Name}}, owned...)
	var events []corev1.Event
	for _, r := range uids[:min(len(uids), maxOwned)] {
		evs, err := d.events.Warnings(ctx, id.Namespace, r.uid)
		if err != nil {
			if note := forbiddenNote(err, "events in namespace "+id.Namespace, "list events"); note != "" {
				diag.Notes = appendNew(diag.Notes, note)
			}
			continue
		}
		events = append(events, evs...)
	}
	diag.Events = aggregateEvents(events)
	diag.Containers = containerStates(pods)
	diag.Logs, notes = d.readLogs(ctx, pods)
	diag.Notes = append(diag.Notes, notes...)
	return diag
}

// related is an object whose events belong to a diagnosis.
type related struct {
	uid  types.UID
	name string
}

// get reads the object id names.
func (d *diagnoser) get(ctx context.Context, id object.ID) (*unstructured.Unstructured, error) {
	m, err := d.c.Mapper.RESTMapping(schema.GroupKind{Group: id.Group, Kind: id.Kind})
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(m.GroupVersionKind)
	return u, d.c.Client.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, u)
}

// owned are live's pods (itself, for a Pod; those its controller runs, for
// a workload), and the ReplicaSets and PersistentVolumeClaims between
// them, whose events tell why a pod was not created or did not start.
func (d *diagnoser) owned(ctx context.Context, live *unstructured.Unstructured) (pods []corev1.Pod, owned []related, notes []string) {
	gk := live.GroupVersionKind().GroupKind()
	ns := live.GetNamespace()
	switch {
	case gk == schema.GroupKind{Kind: "Pod"}:
		var p corev1.Pod
		if runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, &p) == nil {
			pods = []corev1.Pod{p}
		}
	case gk.Group == "apps" || gk.Group == "batch":
		selector, ok := podSelector(live)
		if !ok {
			return nil, nil, nil
		}
		owners := map[types.UID]bool{live.GetUID(): true}
		if gk.Kind == "Deployment" {
			var rss unstructured.UnstructuredList
			rss.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSetList"})
			if err := d.c.Client.List(ctx, &rss, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector}); err == nil {
				for _, rs := range rss.Items {
					if controlledBy(rs.GetOwnerReferences(), live.GetUID()) {
						owners[rs.GetUID()] = true
						owned = append(owned, related{uid: rs.GetUID(), name: "ReplicaSet/" + rs.GetName()})
					}
				}
			}
		}
		var list corev1.PodList
		if err := d.c.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			if note := forbiddenNote(err, "pods in namespace "+ns, "list pods"); note != "" {
				notes = append(notes, note)
			}
			return nil, owned, notes
		}
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && slices.ContainsFunc(p.OwnerReferences, func(r metav1.OwnerReference) bool { return owners[r.UID] }) {
				pods = append(pods, p)
			}
		}
	default:
		return nil, nil, nil
	}
	sort.SliceStable(pods, func(i, j int) bool {
		ri, rj := podIsReady(&pods[i]), podIsReady(&pods[j])
		if ri != rj {
			return !ri
		}
		return pods[i].Name < pods[j].Name
	})
	claims := map[string]bool{}
	for _, p := range pods {
		owned = append(owned, related{uid: p.UID, name: "Pod/" + p.Name})
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				claims[v.PersistentVolumeClaim.ClaimName] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(claims)) {
		var pvc corev1.PersistentVolumeClaim
		if err := d.c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pvc); err == nil {
			owned = append(owned, related{uid: pvc.UID, name: "PersistentVolumeClaim/" + name})
		}
	}
	return pods, owned, notes
}

func controlledBy(refs []metav1.OwnerReference, uid types.UID) bool {
	return slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == uid })
}

func podIsReady(p *corev1.Pod) bool {
	_, ready := podReady(p)
	return ready
}

// readLogs reads the tail of the failing container of each of the first
// pods that have one.
func (d *diagnoser) readLogs(ctx context.Context, pods []corev1.Pod) (logs []result.LogTail, notes []string) {
	for _, p := range pods {
		if len(logs) >= maxLogs {
			break
		}
		name, previous, ok := failingContainer(&p)
		if !ok {
			continue
		}
		raw, err := d.logs.Tail(ctx, p.Namespace, p.Name, name, previous, LogLines, logBytes)
		if err != nil {
			if note := forbiddenNote(err, "logs of pods in namespace "+p.Namespace, "get pods/log"); note != "" {
				notes = appendNew(notes, note)
			}
			continue
		}
		if lines := tailLines(raw, LogLines); len(lines) > 0 {
			logs = append(logs, result.LogTail{Pod: p.Name, Container: name, Previous: previous, Lines: lines})
		}
	}
	return logs, notes
}

// failingContainer is the container of p whose log says why it fails:
// the first that crashed (its previous instance's log, when it restarted
// since) or terminated with an error, else the first running and not
// ready. A container that never started has no log.
func failingContainer(p *corev1.Pod) (name string, previous, ok bool) {
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return cs.Name, false, true
		}
		if cs.LastTerminationState.Terminated != nil && cs.State.Terminated == nil && !cs.Ready {
			return cs.Name, true, true
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil && !cs.Ready {
			return cs.Name, false, true
		}
	}
	return "", false, false
}

// containerStates are the containers of pods (the first maxPods not
// ready) that are not ready, init containers first.
func containerStates(pods []corev1.Pod) []result.ContainerState {
	var out []result.ContainerState
	n := 0
	for _, p := range pods {
		if podIsReady(&p) || n >= maxPods {
			continue
		}
		n++
		for _, cs := range p.Status.InitContainerStatuses {
			if t := cs.State.Terminated; cs.Ready || (t != nil && t.ExitCode == 0) {
				continue
			}
			out = append(out, containerState(p.Name, cs, true))
		}
		for _, cs := range p.Status.ContainerStatuses {
			if !cs.Ready {
				out = append(out, containerState(p.Name, cs, false))
			}
		}
	}
	return out
}

func containerState(pod string, cs corev1.ContainerStatus, init bool) result.ContainerState {
	s := result.ContainerState{Pod: pod, Container: cs.Name, Init: init, Restarts: cs.RestartCount}
	switch {
	case cs.State.Waiting != nil:
		s.State, s.Reason, s.Message = "waiting", cs.State.Waiting.Reason, cs.State.Waiting.Message
	case cs.State.Terminated != nil:
		t := cs.State.Terminated
		s.State, s.Reason, s.Message, s.ExitCode = "terminated", t.Reason, t.Message, &t.ExitCode
	case cs.State.Running != nil:
		s.State = "running, not ready"
	default:
		s.State = "unknown"
	}
	if t := cs.LastTerminationState.Terminated; t != nil {
		s.LastReason, s.LastExitCode = t.Reason, &t.ExitCode
	}
	return s
}

// aggregateEvents counts events of the same type, reason and message
// once (FailedScheduling on every replica is one line), most recently
// seen first, at most maxEvents.
func aggregateEvents(events []corev1.Event) []result.Event {
	type agg struct {
		result.Event
		last time.Time
	}
	var out []*agg
	at := map[string]*agg{}
	for _, e := range events {
		key := e.Type + "\x00" + e.Reason + "\x00" + e.Message
		a, ok := at[key]
		if !ok {
			a = &agg{Event: result.Event{Type: e.Type, Reason: e.Reason, Message: e.Message}}
			at[key] = a
			out = append(out, a)
		}
		a.Count += eventCount(e)
		if name := e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name; !slices.Contains(a.Objects, name) {
			a.Objects = append(a.Objects, name)
		}
		if t := lastSeen(e); t.After(a.last) {
			a.last = t
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].last.After(out[j].last) })
	var agged []result.Event
	for _, a := range out[:min(len(out), maxEvents)] {
		sort.Strings(a.Objects)
		agged = append(agged, a.Event)
	}
	return agged
}

// eventCount is how many times e was seen: the core API's count, or the
// events API's series count (a single occurrence leaves both unset).
func eventCount(e corev1.Event) int32 {
	if e.Series != nil && e.Series.Count > 0 {
		return e.Series.Count
	}
	return max(e.Count, 1)
}

// lastSeen is when e was last seen, by whichever field its recorder set.
func lastSeen(e corev1.Event) time.Time {
	t := e.LastTimestamp.Time
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	if e.EventTime.After(t) {
		t = e.EventTime.Time
	}
	if t.IsZero() {
		t = e.FirstTimestamp.Time
	}
	return t
}

// forbiddenNote is a note that what could not be read needs a right this
// identity lacks; "" for any other error.
func forbiddenNote(err error, what, right string) string {
	if !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
		return ""
	}
	return fmt.Sprintf("%s not shown: reading them is forbidden (RBAC: %s)", what, right)
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
