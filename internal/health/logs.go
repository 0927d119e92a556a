package health

import (
	"bytes"
	"context"
	"io"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// clientsetLogs reads logs as kubectl logs does: pods/log, which the API
// server proxies to the node's kubelet.
type clientsetLogs struct{ cs kubernetes.Interface }

var _ logReader = clientsetLogs{}

func (l clientsetLogs) Tail(ctx context.Context, ns, pod, container string, previous bool, lines, limit int64) ([]byte, error) {
	req := l.cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{
		Container: container, Previous: previous, TailLines: &lines, LimitBytes: &limit,
	})
	stream, err := req.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	// LimitBytes is the kubelet's to honour: read no more whatever it does.
	return io.ReadAll(io.LimitReader(stream, limit))
}

// clientsetEvents lists events with the core API, which also serves the
// events the events.k8s.io API records (the scheduler's).
type clientsetEvents struct{ cs kubernetes.Interface }

var _ eventLister = clientsetEvents{}

func (e clientsetEvents) Warnings(ctx context.Context, ns string, uid types.UID) ([]corev1.Event, error) {
	sel := fields.Set{"involvedObject.uid": string(uid), "type": corev1.EventTypeWarning}.AsSelector().String()
	list, err := e.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel, Limit: 100})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// tailLines are the last n lines of raw, each cut to lineMax bytes (at a
// rune boundary), blank trailing lines dropped.
func tailLines(raw []byte, n int) []string {
	raw = bytes.TrimRight(raw, "\n\r ")
	if len(raw) == 0 {
		return nil
	}
	lines := strings.Split(string(raw), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if len(l) > lineMax {
			cut := lineMax
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			l = l[:cut] + "…"
		}
		lines[i] = strings.ToValidUTF8(l, "?")
	}
	return lines
}
