package apply

import (
	"slices"
	"testing"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An object sent for another change keeps the cluster's values at its
// ignored paths: adopted when no other server-side apply manager owns
// them (an HPA scales through the scale subresource), left out when one
// does, left out when the cluster lacks them; paths that do not differ
// are left alone.
func TestKeepIgnored(t *testing.T) {
	t.Parallel()
	deployment := func(replicas int64, image string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "apps"},
			"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}}}},
		}}
	}
	desired, live := deployment(1, "web:1.1"), deployment(3, "web:1.0")
	got, kept := keepIgnored(desired, live, []string{"/spec/replicas", "/spec/template/spec/containers/0/name", "/metadata/annotations/x"})
	if !slices.Equal(kept, []string{"/spec/replicas"}) || got.Object["spec"].(map[string]any)["replicas"] != int64(3) {
		t.Errorf("kept %v: %v", kept, got.Object["spec"])
	}
	if desired.Object["spec"].(map[string]any)["replicas"] != int64(1) {
		t.Error("desired itself was changed")
	}
	if img := got.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]; img != "web:1.1" {
		t.Errorf("the change itself: %v", img)
	}

	owned := live.DeepCopy()
	owned.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "autoscaler", Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}}})
	got, kept = keepIgnored(desired, owned, []string{"/spec/replicas"})
	if _, has := got.Object["spec"].(map[string]any)["replicas"]; has || len(kept) != 1 {
		t.Errorf("a field another applier owns is left out: %v, kept %v", got.Object["spec"], kept)
	}

	missing := live.DeepCopy()
	delete(missing.Object["spec"].(map[string]any), "replicas")
	if got, _ = keepIgnored(desired, missing, []string{"/spec/replicas"}); got.Object["spec"].(map[string]any)["replicas"] != nil {
		t.Errorf("a field the cluster lacks is left out: %v", got.Object["spec"])
	}
}

// Rules select by ssa's selectors; rules without one select everything,
// and reach ssa as one rule (it keys rules by selector).
func TestIgnoreRulesSelect(t *testing.T) {
	t.Parallel()
	rules := []jsondiff.IgnoreRule{
		{Paths: []string{"/spec/replicas"}, Selector: &jsondiff.Selector{Kind: "Deployment", Name: "web-.*"}},
		{Paths: []string{"/metadata/labels/a"}},
		{Paths: []string{"/metadata/labels/b"}},
	}
	rs, err := compileIgnore(rules)
	if err != nil {
		t.Fatal(err)
	}
	obj := func(kind, name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind, "metadata": map[string]any{"name": name}}}
	}
	if got := rs.paths(obj("Deployment", "web-eu")); !slices.Equal(got, []string{"/spec/replicas", "/metadata/labels/a", "/metadata/labels/b"}) {
		t.Errorf("web-eu: %v", got)
	}
	if got := rs.paths(obj("Deployment", "api")); !slices.Equal(got, []string{"/metadata/labels/a", "/metadata/labels/b"}) {
		t.Errorf("api: %v", got)
	}
	want := []jsondiff.IgnoreRule{rules[0], {Paths: []string{"/metadata/labels/a", "/metadata/labels/b"}}}
	if diff := cmp.Diff(want, ssaRules(rules)); diff != "" {
		t.Errorf("for ssa (-want +got):\n%s", diff)
	}
	if _, err := compileIgnore([]jsondiff.IgnoreRule{{Paths: []string{"spec/replicas"}}}); err == nil {
		t.Error("a path that is no JSON pointer was taken")
	}
}
