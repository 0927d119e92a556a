package health

import (
	"errors"
	"slices"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/collector"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	cliobject "github.com/fluxcd/cli-utils/pkg/object"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func deployment(name string) cliobject.ObjMetadata {
	return cliobject.ObjMetadata{GroupKind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, Namespace: "ns", Name: name}
}

func statuses(s map[string]status.Status) map[cliobject.ObjMetadata]*event.ResourceStatus {
	out := map[cliobject.ObjMetadata]*event.ResourceStatus{}
	for name, st := range s {
		rs := &event.ResourceStatus{Identifier: deployment(name), Status: st}
		if name == "forbidden" {
			rs.Error = apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", errors.New("cannot list"))
		}
		out[deployment(name)] = rs
	}
	return out
}

func TestObserverWaitsForAllButCurrentAndFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		statuses    map[string]status.Status
		wantWaiting []string
		wantSettled bool
	}{
		{
			name:        "all current",
			statuses:    map[string]status.Status{"a": status.CurrentStatus, "b": status.CurrentStatus},
			wantSettled: true,
		},
		{
			name:        "failed is not waited for",
			statuses:    map[string]status.Status{"a": status.CurrentStatus, "b": status.FailedStatus},
			wantSettled: true,
		},
		{
			name:        "a status this identity may not read is not",
			statuses:    map[string]status.Status{"a": status.CurrentStatus, "forbidden": status.UnknownStatus},
			wantSettled: true,
		},
		{
			name:        "in progress and unknown are",
			statuses:    map[string]status.Status{"a": status.InProgressStatus, "b": status.UnknownStatus, "c": status.CurrentStatus},
			wantWaiting: []string{"Deployment/ns/a (InProgress)", "Deployment/ns/b (Unknown)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			settleCalled := false
			o := &observer{settle: func() { settleCalled = true }}
			sc := collector.NewResourceStatusCollector(nil)
			sc.ResourceStatuses = statuses(tc.statuses)
			o.Notify(sc, event.Event{Type: event.ResourceUpdateEvent})

			got := o.waiting()
			slices.Sort(got)
			if diff := cmp.Diff(tc.wantWaiting, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("waiting mismatch (-want +got):\n%s", diff)
			}
			if o.isSettled() != tc.wantSettled || settleCalled != tc.wantSettled {
				t.Errorf("settled = %v, settle called = %v; want %v", o.isSettled(), settleCalled, tc.wantSettled)
			}
		})
	}
}
