package kube

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Only an answer without the kind proves it is not served; a discovery
// that failed says nothing about it.
func TestNotServed(t *testing.T) {
	t.Parallel()
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	noKind := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "example.com", Kind: "Widget"}, SearchedVersions: []string{"v1"}}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"no kind match", noKind, true},
		{"wrapped", fmt.Errorf("getting Widget/w: %w", noKind), true},
		{"the group's discovery found nothing", &apiutil.ErrResourceDiscoveryFailed{gv: apierrors.NewNotFound(schema.GroupResource{}, "")}, true},
		{"the group's discovery failed", &apiutil.ErrResourceDiscoveryFailed{gv: apierrors.NewServiceUnavailable("down"), {Group: "example.com", Version: "v2"}: apierrors.NewNotFound(schema.GroupResource{}, "")}, false},
		{"another error", errors.New("connection refused"), false},
		{"not found", apierrors.NewNotFound(schema.GroupResource{Resource: "widgets"}, "w"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := NotServed(tc.err); got != tc.want {
				t.Errorf("NotServed(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestServes(t *testing.T) {
	t.Parallel()
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "example.com", Version: "v2"}, {Group: "example.com", Version: "v1"}})
	m.Add(schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, meta.RESTScopeNamespace)
	for _, tc := range []struct {
		kind string
		want Serving
	}{
		{"Widget", Serving{Versions: []string{"v2", "v1"}, Preferred: "v2"}},
		{"Gadget", Serving{}},
	} {
		got, err := Serves(m, schema.GroupKind{Group: "example.com", Kind: tc.kind})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.kind, diff)
		}
	}
}
