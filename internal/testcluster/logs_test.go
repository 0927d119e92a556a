package testcluster

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A pod labelled CrashLabel crash-loops with the label's exit code, a
// BackOff event is recorded, and its logs (the running instance's and the
// previous one's) come through the API server from kwok's kubelet endpoint.
func TestCrashLabelAndServedLogs(t *testing.T) {
	ns := cluster.Namespace(t)
	client := cluster.Client(t)
	ctx := t.Context()
	cluster.ServeLogs(t, ns, ContainerLog{Container: "app", Lines: []string{"starting"}, Previous: []string{"starting", "panic: no database"}})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "crasher", Labels: map[string]string{CrashLabel: "3"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "crasher", metav1.GetOptions{})
		got = p
		return err == nil && len(p.Status.ContainerStatuses) == 1, err
	})
	if err != nil {
		t.Fatalf("pod never crashed: %v (status %+v)", err, got.Status)
	}
	cs := got.Status.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" || cs.LastTerminationState.Terminated == nil ||
		cs.LastTerminationState.Terminated.ExitCode != 3 || cs.RestartCount != CrashRestarts || got.Status.Phase != corev1.PodRunning {
		t.Fatalf("container status %+v, phase %s; want CrashLoopBackOff after exit code 3, %d restarts, Running", cs, got.Status.Phase, CrashRestarts)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		evs, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=crasher,reason=BackOff"})
		return err == nil && len(evs.Items) > 0 && evs.Items[0].Type == corev1.EventTypeWarning, err
	})
	if err != nil {
		t.Fatalf("no BackOff event: %v", err)
	}
	for _, c := range []struct {
		previous bool
		want     string
	}{{false, "starting\n"}, {true, "starting\npanic: no database\n"}} {
		var out []byte
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			b, err := client.CoreV1().Pods(ns).GetLogs("crasher", &corev1.PodLogOptions{Container: "app", Previous: c.previous}).DoRaw(ctx)
			out = b
			if err != nil {
				t.Logf("logs (previous=%v): %v", c.previous, err)
			}
			return err == nil, nil
		})
		if err != nil || string(out) != c.want {
			t.Fatalf("logs (previous=%v) = %q, %v; want %q", c.previous, out, err, c.want)
		}
		if strings.Contains(string(out), "stdout F") {
			t.Fatalf("logs served raw CRI lines: %q", out)
		}
	}
}
