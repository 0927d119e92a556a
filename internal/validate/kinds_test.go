package validate_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// cluster serves the built-in kinds of the fixtures, and Widgets of
// example.com at v2 only.
func cluster(gk schema.GroupKind) ([]string, error) {
	switch gk.String() {
	case "Namespace", "ConfigMap", "Deployment.apps", "CustomResourceDefinition.apiextensions.k8s.io":
		return []string{"v1"}, nil
	case "Widget.example.com":
		return []string{"v2"}, nil
	}
	return nil, nil
}

// Before anything is written, every kind must be served by the cluster,
// defined by a CRD of the unit, or known from elsewhere (a CRD another
// unit of the configuration defines).
func TestKinds(t *testing.T) {
	t.Parallel()
	gadget := schema.GroupKind{Group: "example.com", Kind: "Gadget"}
	for _, tc := range []struct {
		name  string
		files []string
		known []schema.GroupKind
		want  []validate.UnservedKind
	}{
		{name: "built-in kinds served by the cluster", files: []string{"deployment.yaml", "configmap.yaml"}},
		{name: "a custom resource beside its CRD", files: []string{"crd-widget.yaml", "widget.yaml"}},
		{name: "a kind known from elsewhere in the configuration", files: []string{"gadget.yaml"}, known: []schema.GroupKind{gadget}},
		{name: "a kind nothing defines", files: []string{"configmap.yaml", "gadget.yaml", "gadget.yaml"}, want: []validate.UnservedKind{{
			Kind: gadget.WithVersion("v1"),
			Objects: []object.Located{
				{ID: object.ID{Group: gadget.Group, Kind: "Gadget", Namespace: "ns", Name: "thing"}, Source: "gadget.yaml"},
				{ID: object.ID{Group: gadget.Group, Kind: "Gadget", Namespace: "ns", Name: "thing"}, Source: "gadget.yaml"},
			},
		}}},
		{name: "a version the cluster does not serve", files: []string{"widget.yaml"}, want: []validate.UnservedKind{{
			Kind:    schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
			Served:  []string{"v2"},
			Objects: []object.Located{{ID: object.ID{Group: "example.com", Kind: "Widget", Namespace: "ns", Name: "small"}, Source: "widget.yaml"}},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs, sources := load(t, tc.files...)
			err := validate.Kinds(objs, sources, tc.known, cluster)
			var got []validate.UnservedKind
			var unserved *validate.UnservedKindsError
			if errors.As(err, &unserved) {
				got = unserved.Kinds
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unserved kinds (-want +got):\n%s", diff)
			}
		})
	}
}

// The message names each kind once, why it cannot be applied, and its
// objects with their files.
func TestUnservedKindsMessage(t *testing.T) {
	t.Parallel()
	objs, sources := load(t, "gadget.yaml", "widget.yaml")
	err := validate.Kinds(objs, sources, nil, cluster)
	want := "Gadget/ns/thing (gadget.yaml): kind Gadget (example.com/v1) is not served by the cluster and no CRD of this unit defines it (is its CRD installed?)\n" +
		"Widget/ns/small (widget.yaml): kind Widget (example.com/v1) is not served: Widget.example.com is served only at version v2"
	if err == nil || err.Error() != want {
		t.Errorf("message:\n%v\nwant:\n%s", err, want)
	}
}

// A discovery that could not tell is the error, not a verdict.
func TestKindsDiscoveryFails(t *testing.T) {
	t.Parallel()
	objs, sources := load(t, "configmap.yaml")
	boom := errors.New("discovering kind ConfigMap: the server is currently unable to handle the request")
	err := validate.Kinds(objs, sources, nil, func(schema.GroupKind) ([]string, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
}
