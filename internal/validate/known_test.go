package validate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

// A schema directory is read in the layout of a CRDs catalog, the
// group's directory first, then the flat one; an apiVersion or kind that
// could name another file is looked up nowhere.
func TestSchemaFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		want []string
	}{
		{schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"},
			[]string{"monitoring.coreos.com/servicemonitor_v1.json", "servicemonitor_v1.json"}},
		{schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "ClusterIssuer"},
			[]string{"cert-manager.io/clusterissuer_v1.json", "clusterissuer_v1.json"}},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, []string{"configmap_v1.json"}},
		{schema.GroupVersionKind{Group: "..", Version: "v1", Kind: "Secret"}, nil},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1/../..", Kind: "Widget"}, nil},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "../widget"}, nil},
		{schema.GroupVersionKind{Group: "Example.com", Version: "v1", Kind: "Widget"}, nil},
	} {
		if got := validate.SchemaFiles(tc.gvk); !cmp.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.gvk, got, tc.want)
		}
	}
}

// Where a custom resource's schema comes from, beyond its own build: the
// configuration's CRDs, then the schema directory; a kind with no schema
// anywhere is an unknown kind (which the offline diff notes), but a kind
// known at other versions only is an error.
func TestKnownSchemaLookup(t *testing.T) {
	t.Parallel()
	crds, _ := load(t, "crd-widget.yaml")
	dir := filepath.Join("testdata", "schemas")
	for _, tc := range []struct {
		name     string
		crds     bool // the configuration holds crd-widget.yaml
		dir      bool // the schema directory is testdata/schemas
		files    []string
		want     []string // errors
		unknowns []string // Kind.group of the unknown kinds
	}{
		{name: "custom resource without its CRD", files: []string{"widget.yaml"}, unknowns: []string{"Widget.example.com"}},
		{name: "custom resource with its CRD in another unit", crds: true, files: []string{"widget.yaml"}},
		{name: "another unit's CRD catches a typo", crds: true, files: []string{"widget-unknown-field.yaml"}, want: []string{
			"Widget/ns/small (widget-unknown-field.yaml): spec.colour: unknown field",
		}},
		{name: "a version the configuration's CRD does not serve", crds: true, files: []string{"widget-v2.yaml"}, want: []string{
			"Widget/ns/small (widget-v2.yaml): apiVersion: example.com/v2 is not served: its CustomResourceDefinition serves Widget.example.com at v1",
		}},
		{name: "a version Kubernetes does not serve", files: []string{"deployment-v1beta1.yaml"}, want: []string{
			"Deployment/ns/old (deployment-v1beta1.yaml): apiVersion: apps/v1beta1 is not served: Kubernetes v1.37.2 serves Deployment.apps at v1",
		}},
		{name: "catalog layout", dir: true, files: []string{"servicemonitor.yaml"}},
		{name: "catalog layout catches a typo, over the flat file", dir: true, files: []string{"servicemonitor-typo.yaml"}, want: []string{
			"ServiceMonitor/ns/web (servicemonitor-typo.yaml): spec.endpoints[0].intervall: unknown field",
		}},
		{name: "flat layout", dir: true, files: []string{"gadget.yaml"}},
		{name: "built-in kinds come first", dir: true, files: []string{"configmap.yaml"}},
		{name: "a schema file that does not read", dir: true, files: []string{"thing.yaml"}, want: []string{
			"Thing/ns/thing (thing.yaml): apiVersion: its schema " + filepath.Join(dir, "broken.example.com", "thing_v1.json") + " does not read: unexpected end of JSON input",
		}},
		{name: "no schema anywhere", crds: true, dir: true, files: []string{"helmrelease.yaml", "servicemonitor.yaml"}, unknowns: []string{"HelmRelease.helm.toolkit.fluxcd.io"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := ""
			if tc.dir {
				d = dir
			}
			known, err := validate.NewKnown(d)
			if err != nil {
				t.Fatal(err)
			}
			if tc.crds {
				known = known.WithCRDs(crds)
			}
			objs, sources := load(t, tc.files...)
			f, err := known.Check(objs, sources)
			if err != nil {
				t.Fatal(err)
			}
			var got, unknowns []string
			for _, e := range append(f.Errors, f.Unserved...) {
				got = append(got, e.Error())
			}
			for _, u := range f.UnknownKinds {
				unknowns = append(unknowns, u.Kind())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.unknowns, unknowns); diff != "" {
				t.Errorf("unknown kinds mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// An unknown kind says where its schema was looked for.
func TestUnknownKindSaysWhereItLooked(t *testing.T) {
	t.Parallel()
	objs, sources := load(t, "helmrelease.yaml")
	known, err := validate.NewKnown(filepath.Join("testdata", "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	err = known.WithCRDs(nil).Client(objs, sources)
	want := "HelmRelease/ns/podinfo helm.toolkit.fluxcd.io/v2 (helmrelease.yaml): unknown kind: no built-in schema and no CustomResourceDefinition in this build, nor in the configuration's CustomResourceDefinitions or the schema directory"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestNewKnownWantsADirectory(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{filepath.Join("testdata", "missing"), filepath.Join("testdata", "widget.yaml")} {
		if _, err := validate.NewKnown(dir); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: got %v, want an error naming it", dir, err)
		}
	}
}
