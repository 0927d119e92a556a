package apply

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOnlyStatusSince(t *testing.T) {
	t.Parallel()
	applied := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(applied.Add(d)); return &t }
	ours := metav1.ManagedFieldsEntry{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, Time: at(0)}
	status := metav1.ManagedFieldsEntry{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: at(5 * time.Second)}
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"only a controller's status since", []metav1.ManagedFieldsEntry{ours, status}, true},
		{"an older edit by someone else", []metav1.ManagedFieldsEntry{{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(-time.Minute)}, ours, status}, true},
		{"an edit since", []metav1.ManagedFieldsEntry{ours, status, {Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(2 * time.Second)}}, false},
		{"an edit in the same second", []metav1.ManagedFieldsEntry{ours, {Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(0)}}, false},
		{"a scale since (HPA)", []metav1.ManagedFieldsEntry{ours, {Manager: "hpa", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "scale", Time: at(time.Second)}}, false},
		{"our entry re-stamped (another apply)", []metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, Time: at(time.Second)}, status}, false},
		{"our entry gone", []metav1.ManagedFieldsEntry{status}, false},
		{"an entry without a time", []metav1.ManagedFieldsEntry{ours, {Manager: "x", Operation: metav1.ManagedFieldsOperationUpdate}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := onlyStatusSince(tc.entries, applied); got != tc.want {
				t.Errorf("onlyStatusSince = %v, want %v", got, tc.want)
			}
		})
	}
	if onlyStatusSince([]metav1.ManagedFieldsEntry{ours}, time.Time{}) {
		t.Error("an object with no apply time counted as settled")
	}
}

// An object settles at the version its wait found it ready at, and only
// there.
func TestSettles(t *testing.T) {
	t.Parallel()
	applied := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	stamp := func(d time.Duration) *metav1.Time { t := metav1.NewTime(applied.Add(d)); return &t }
	fields := []metav1.ManagedFieldsEntry{
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, Time: stamp(0)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: stamp(5 * time.Second)},
	}
	live := func(rv string, deleting bool) *metav1.PartialObjectMetadata {
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv, ManagedFields: fields}}
		if deleting {
			m.DeletionTimestamp = stamp(time.Minute)
		}
		return m
	}
	a := func(ready string) Applied {
		return Applied{Recorded: Recorded{ResourceVersion: "10"}, At: applied, Ready: ready}
	}
	for _, tc := range []struct {
		name string
		a    Applied
		live *metav1.PartialObjectMetadata
		want bool
	}{
		{"at the version found ready", a("12"), live("12", false), true},
		{"moved since the wait found it ready", a("12"), live("13", false), false},
		{"no wait said (a caller without one)", a(""), live("13", false), true},
		{"not moved since the apply", a("10"), live("10", false), false},
		{"being deleted", a("12"), live("12", true), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := settles(tc.a, tc.live); got != tc.want {
				t.Errorf("settles = %v, want %v", got, tc.want)
			}
		})
	}
}
