package health

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func warning(on, reason, msg string, count int32, at time.Duration) corev1.Event {
	kind, name, _ := strings.Cut(on, "/")
	return corev1.Event{
		Type: corev1.EventTypeWarning, Reason: reason, Message: msg, Count: count,
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name, UID: types.UID(on)},
		LastTimestamp:  metav1.NewTime(t0.Add(at)),
	}
}

func TestAggregateEvents(t *testing.T) {
	t.Parallel()
	scheduling := "0/2 nodes are available"
	series := warning("Pod/b", "FailedScheduling", scheduling, 0, 0)
	series.LastTimestamp = metav1.Time{}
	series.EventTime = metav1.NewMicroTime(t0.Add(3 * time.Second))
	series.Series = &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(t0.Add(5 * time.Second))}
	got := aggregateEvents([]corev1.Event{
		warning("Pod/a", "FailedScheduling", scheduling, 2, time.Second),
		series,
		warning("ReplicaSet/rs", "FailedCreate", "exceeded quota", 1, 10*time.Second),
		warning("Pod/a", "FailedScheduling", scheduling, 1, 0), // same pod, an older record
	})
	want := []result.Event{
		{Type: "Warning", Reason: "FailedCreate", Message: "exceeded quota", Count: 1, Objects: []string{"ReplicaSet/rs"}},
		{Type: "Warning", Reason: "FailedScheduling", Message: scheduling, Count: 7, Objects: []string{"Pod/a", "Pod/b"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aggregateEvents (-want +got):\n%s", diff)
	}
}

func TestAggregateEventsKeepsTheMostRecent(t *testing.T) {
	t.Parallel()
	var events []corev1.Event
	for i := range maxEvents + 3 {
		events = append(events, warning("Pod/a", "Unhealthy", strings.Repeat("x", i+1), 1, time.Duration(i)*time.Second))
	}
	got := aggregateEvents(events)
	if len(got) != maxEvents || got[0].Message != strings.Repeat("x", maxEvents+3) {
		t.Errorf("got %d events, first %q; want the %d most recent, newest first", len(got), got[0].Message, maxEvents)
	}
}

func TestFailingContainer(t *testing.T) {
	t.Parallel()
	crashed := corev1.ContainerStatus{Name: "app", RestartCount: 2,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}
	failed := corev1.ContainerStatus{Name: "job", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}}
	pulling := corev1.ContainerStatus{Name: "side", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}
	unready := corev1.ContainerStatus{Name: "web", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	done := corev1.ContainerStatus{Name: "init", Ready: true, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}
	for _, tc := range []struct {
		name           string
		init, main     []corev1.ContainerStatus
		want           string
		previous, some bool
	}{
		{"a crash: the instance before the restart", nil, []corev1.ContainerStatus{pulling, crashed}, "app", true, true},
		{"terminated with an error: its own log", nil, []corev1.ContainerStatus{failed}, "job", false, true},
		{"a failing init container first", []corev1.ContainerStatus{done, failed}, []corev1.ContainerStatus{crashed}, "job", false, true},
		{"running and not ready", nil, []corev1.ContainerStatus{pulling, unready}, "web", false, true},
		{"never started: no log", nil, []corev1.ContainerStatus{pulling}, "", false, false},
	} {
		p := &corev1.Pod{Status: corev1.PodStatus{InitContainerStatuses: tc.init, ContainerStatuses: tc.main}}
		name, previous, ok := failingContainer(p)
		if name != tc.want || previous != tc.previous || ok != tc.some {
			t.Errorf("%s: failingContainer = %q, %v, %v; want %q, %v, %v", tc.name, name, previous, ok, tc.want, tc.previous, tc.some)
		}
	}
}

func TestContainerStates(t *testing.T) {
	t.Parallel()
	code := int32(137)
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api-1"},
		Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", Ready: true, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", RestartCount: 5, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off\n40s"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: code}}},
				{Name: "proxy", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			},
		},
	}
	got := containerStates([]corev1.Pod{pod})
	want := []result.ContainerState{{Pod: "api-1", Container: "app", State: "waiting", Reason: "CrashLoopBackOff", Message: "back-off\n40s",
		LastReason: "OOMKilled", LastExitCode: &code, Restarts: 5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("containerStates (-want +got):\n%s", diff)
	}
	if s, want := got[0].String(), "Pod/api-1 container app: waiting CrashLoopBackOff (back-off 40s); last instance terminated: OOMKilled, exit code 137; 5 restarts"; s != want {
		t.Errorf("String() = %q, want %q", s, want)
	}
}

func TestTailLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", lineMax) // two bytes each: cut at a rune boundary
	for _, tc := range []struct {
		name string
		raw  string
		n    int
		want []string
	}{
		{"last n", "a\nb\nc\nd\n", 2, []string{"c", "d"}},
		{"blank end dropped, CRLF", "a\r\nb\r\n\n\n", 5, []string{"a", "b"}},
		{"empty", "\n", 5, nil},
		{"long line cut", long, 1, []string{strings.Repeat("é", lineMax/2) + "…"}},
		{"invalid UTF-8", "ok \xff", 1, []string{"ok ?"}},
	} {
		if diff := cmp.Diff(tc.want, tailLines([]byte(tc.raw), tc.n)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// Warnings as they happen: once per waited-for object, reason and
// message; a pod's (or its ReplicaSet's) said as its Deployment's; events
// from before the wait, on objects not waited for, or Normal, left out.
func TestWarningLines(t *testing.T) {
	t.Parallel()
	deploy := object.ID{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "web"}
	owners := map[string]*metav1.OwnerReference{
		"Pod/web-1":         {Kind: "ReplicaSet", Name: "web-rs", APIVersion: "apps/v1", UID: "ReplicaSet/web-rs"},
		"Pod/web-2":         {Kind: "ReplicaSet", Name: "web-rs", APIVersion: "apps/v1", UID: "ReplicaSet/web-rs"},
		"ReplicaSet/web-rs": {Kind: "Deployment", Name: "web", APIVersion: "apps/v1", UID: "Deployment/web"},
	}
	lookups := 0
	w := newWarnings([]object.ID{deploy}, t0)
	w.owner = func(_ context.Context, _ string, ref corev1.ObjectReference) (*metav1.OwnerReference, error) {
		lookups++
		return owners[ref.Kind+"/"+ref.Name], nil
	}
	normal := warning("Pod/web-1", "Pulled", "pulled", 1, time.Second)
	normal.Type = corev1.EventTypeNormal
	first := w.lines(t.Context(), "ns", []corev1.Event{
		warning("Pod/web-2", "FailedScheduling", "no  node\nfits", 1, 2*time.Second),
		warning("Pod/web-1", "FailedScheduling", "no  node\nfits", 1, time.Second),
		warning("ReplicaSet/web-rs", "FailedCreate", "quota", 1, 3*time.Second),
		warning("Pod/other", "BackOff", "not ours", 1, time.Second),
		warning("Pod/web-1", "Old", "before the wait", 1, -time.Minute),
		normal,
	})
	want := []string{
		"warning: Deployment/ns/web: FailedScheduling on Pod/web-1: no node fits",
		"warning: Deployment/ns/web: FailedCreate on ReplicaSet/web-rs: quota",
	}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("first poll (-want +got):\n%s", diff)
	}
	again := w.lines(t.Context(), "ns", []corev1.Event{
		warning("Pod/web-1", "FailedScheduling", "no  node\nfits", 5, 9*time.Second),
		warning("Deployment/web", "ProgressDeadlineExceeded", "too slow", 1, 9*time.Second),
	})
	if diff := cmp.Diff([]string{"warning: Deployment/ns/web: ProgressDeadlineExceeded: too slow"}, again); diff != "" {
		t.Errorf("second poll (-want +got):\n%s", diff)
	}
	if lookups != 4 { // Pod/web-1, ReplicaSet/web-rs, Pod/other, Pod/web-2 (its ReplicaSet known)
		t.Errorf("%d owner lookups: owners are not cached", lookups)
	}
}

func TestWarningLinesAreBounded(t *testing.T) {
	t.Parallel()
	w := newWarnings([]object.ID{{Kind: "Pod", Namespace: "ns", Name: "p"}}, t0)
	var events []corev1.Event
	for i := range maxWarningLines + 10 {
		events = append(events, warning("Pod/p", "Unhealthy", strings.Repeat("x", i+1), 1, time.Second))
	}
	lines := w.lines(t.Context(), "ns", events)
	if len(lines) != maxWarningLines+1 || !strings.Contains(lines[maxWarningLines], "more Warning events") {
		t.Errorf("%d lines, last %q; want %d and a line saying more were left out", len(lines), lines[len(lines)-1], maxWarningLines+1)
	}
}
