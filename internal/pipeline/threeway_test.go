package pipeline

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/apply"
	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// deployment is web with replicas, image and, when set, a team label.
func deployment(replicas int64, image, team string) *unstructured.Unstructured {
	meta := map[string]any{"name": "web", "namespace": "shop"}
	if team != "" {
		meta["labels"] = map[string]any{"team": team}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
		"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "web", "image": image}}}}},
	}}
}

// Field sets as the API server records them in managedFields.
const (
	ownsAll          = `{"f:metadata":{"f:labels":{"f:team":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
	ownsAllButScale  = `{"f:metadata":{"f:labels":{"f:team":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
	ownsAllButImage  = `{"f:metadata":{"f:labels":{"f:team":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{}}}}}}}`
	ownsAllButLabels = `{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
)

// owning is u with apply.FieldManager owning fields, as a live object.
func owning(u *unstructured.Unstructured, fields string) *unstructured.Unstructured {
	u = u.DeepCopy()
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(ownsAll)}},
		{Manager: apply.FieldManager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}},
	})
	return u
}

// fieldDrift finds what someone else changed in the cluster: fields the
// apply would change that this tool no longer owns. Merging reverts them
// where the PR leaves the field alone, and sets the PR's value where it
// does not. A field this tool still owns changes because the desired
// state did, which is no drift.
func TestFieldDrift(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		live, merged, base, head *unstructured.Unstructured
		want                     []result.FieldDrift
		pending                  bool
	}{
		{"no change", owning(deployment(2, "web:1", "a"), ownsAll), deployment(2, "web:1", "a"), deployment(2, "web:1", "a"), deployment(2, "web:1", "a"), nil, false},
		{"scaled by hand, the PR changes the image: merging reverts the scale",
			owning(deployment(5, "web:1", "a"), ownsAllButScale), deployment(2, "web:2", "a"), deployment(2, "web:1", "a"), deployment(2, "web:2", "a"),
			[]result.FieldDrift{{Field: "spec.replicas", Live: "5", Applied: "2", Merged: "2", Reverted: true}}, false},
		{"scaled by hand and by the PR: the PR's value wins",
			owning(deployment(5, "web:1", "a"), ownsAllButScale), deployment(3, "web:1", "a"), deployment(2, "web:1", "a"), deployment(3, "web:1", "a"),
			[]result.FieldDrift{{Field: "spec.replicas", Live: "5", Applied: "2", Merged: "3"}}, false},
		{"an image set by hand in a keyed list item",
			owning(deployment(2, "web:hotfix", "a"), ownsAllButImage), deployment(2, "web:1", "a"), deployment(2, "web:1", "a"), deployment(2, "web:1", "a"),
			[]result.FieldDrift{{Field: "spec.template.spec.containers[0].image", Live: "web:hotfix", Applied: "web:1", Merged: "web:1", Reverted: true}}, false},
		{"a field still owned changes with the desired state (a substituted value): no drift, pending",
			owning(deployment(2, "web:1", "a"), ownsAll), deployment(2, "web:2", "a"), deployment(2, "web:1", "a"), deployment(2, "web:1", "a"), nil, true},
		{"scaled by hand, and an image from a commit not yet deployed: drift and pending",
			owning(deployment(5, "web:1", "a"), ownsAllButScale), deployment(2, "web:2", "a"), deployment(2, "web:2", "a"), deployment(2, "web:2", "a"),
			[]result.FieldDrift{{Field: "spec.replicas", Live: "5", Applied: "2", Merged: "2", Reverted: true}}, true},
		{"a label removed by hand comes back",
			owning(deployment(2, "web:1", ""), ownsAllButLabels), deployment(2, "web:1", "a"), deployment(2, "web:1", "a"), deployment(2, "web:1", "a"),
			[]result.FieldDrift{{Field: "metadata.labels", Live: "", Applied: `{"team":"a"}`, Merged: `{"team":"a"}`, Reverted: true}}, false},
		{"a label new in Git is not drift",
			owning(deployment(2, "web:1", ""), ownsAllButLabels), deployment(2, "web:1", "a"), deployment(2, "web:1", ""), deployment(2, "web:1", "a"), nil, false},
		{"an object the PR adds has no drift",
			owning(deployment(5, "web:1", "a"), ownsAllButScale), deployment(2, "web:1", "a"), nil, deployment(2, "web:1", "a"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, pending := fieldDrift(tc.live, tc.merged, tc.base, tc.head, diff.Secrets{})
			if !reflect.DeepEqual(got, tc.want) || pending != tc.pending {
				t.Errorf("got  %+v, pending %v\nwant %+v, pending %v", got, pending, tc.want, tc.pending)
			}
		})
	}
}
