package main

import (
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// writesDuring returns the writes to Secrets (inventories) and Leases
// (units' locks) in namespace ns while fn runs, as "<event> <kind>/<name>".
// A sentinel Lease written after fn marks the end, so every write fn made
// has been seen, whatever the watch's delay.
func writesDuring(t *testing.T, ns string, fn func()) []string {
	t.Helper()
	k := cluster.Client(t)
	ctx := t.Context()
	secrets, err := k.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leases, err := k.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := k.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: secrets.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Stop()
	wl, err := k.CoordinationV1().Leases(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: leases.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Stop()

	fn()

	sentinel := fmt.Sprintf("zz-sentinel-%d", time.Now().UnixNano())
	if _, err := k.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: sentinel}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = k.CoordinationV1().Leases(ns).Delete(ctx, sentinel, metav1.DeleteOptions{}) }()
	var out []string
	deadline := time.After(time.Minute)
	for {
		select {
		case ev := <-ws.ResultChan():
			if m, err := metaOf(ev); err == nil {
				out = append(out, fmt.Sprintf("%s Secret/%s", ev.Type, m.GetName()))
			}
		case ev := <-wl.ResultChan():
			m, err := metaOf(ev)
			if err != nil {
				continue
			}
			if m.GetName() == sentinel {
				// Secrets' events up to here are in ws's channel already
				// or never: drain what is buffered.
				for {
					select {
					case ev := <-ws.ResultChan():
						if m, err := metaOf(ev); err == nil {
							out = append(out, fmt.Sprintf("%s Secret/%s", ev.Type, m.GetName()))
						}
					case <-time.After(200 * time.Millisecond):
						return out
					}
				}
			}
			out = append(out, fmt.Sprintf("%s Lease/%s", ev.Type, m.GetName()))
		case <-deadline:
			t.Fatal("the sentinel Lease was never seen")
		}
	}
}

func metaOf(ev watch.Event) (metav1.Object, error) {
	if ev.Type == watch.Error || ev.Type == watch.Bookmark {
		return nil, fmt.Errorf("event %s", ev.Type)
	}
	m, ok := ev.Object.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("event of %T", ev.Object)
	}
	return m, nil
}
