package validate_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
)

func TestClientAcceptsValidObjects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files []string
	}{
		{"deployment", []string{"deployment.yaml"}},
		{"service", []string{"service.yaml"}},
		{"configmap", []string{"configmap.yaml"}},
		{"secret with empty and stringData values", []string{"secret.yaml"}},
		{"int-or-string port as number and as name", []string{"service-port-int-or-string.yaml"}},
		{"quantities as numbers and strings", []string{"pod-quantities.yaml"}},
		{"CRD alone", []string{"crd-widget.yaml"}},
		{"custom resource with its CRD in the build", []string{"crd-widget.yaml", "widget.yaml"}},
		{"everything at once", []string{"deployment.yaml", "service.yaml", "configmap.yaml", "secret.yaml", "crd-widget.yaml", "widget.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs, sources := load(t, tt.files...)
			if err := validate.Client(objs, sources); err != nil {
				t.Fatalf("want no error, got:\n%v", err)
			}
		})
	}
}

func TestClientReportsViolations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files []string
		want  []string
	}{
		{"wrong type", []string{"deployment-replicas-string.yaml"}, []string{
			"Deployment/ns/web (deployment-replicas-string.yaml): spec.replicas: expected integer, got string",
		}},
		{"unknown field", []string{"deployment-unknown-field.yaml"}, []string{
			"Deployment/ns/web (deployment-unknown-field.yaml): spec.replica: unknown field",
		}},
		{"missing required field", []string{"deployment-container-without-name.yaml"}, []string{
			"Deployment/ns/web (deployment-container-without-name.yaml): spec.template.spec.containers[0].name: required field is missing",
		}},
		{"several problems, sorted by field", []string{"deployment-several-problems.yaml"}, []string{
			"Deployment/ns/web (deployment-several-problems.yaml): metadata.labelz: unknown field",
			"Deployment/ns/web (deployment-several-problems.yaml): spec.replicas: expected integer, got string",
			"Deployment/ns/web (deployment-several-problems.yaml): spec.template.spec.containers[0].imagePullPolicy: expected string, got integer",
			"Deployment/ns/web (deployment-several-problems.yaml): spec.template.spec.containers[0].name: required field is missing",
		}},
		{"int-or-string given a boolean", []string{"service-port-boolean.yaml"}, []string{
			"Service/ns/web (service-port-boolean.yaml): spec.ports[0].targetPort: expected integer or string, got boolean",
		}},
		{"quantity in a foreign notation", []string{"pod-quantity-invalid.yaml"}, []string{
			"Pod/ns/sized (pod-quantity-invalid.yaml): spec.containers[0].resources.limits.memory: invalid quantity",
		}},
		{"secret data not base64", []string{"secret-not-base64.yaml"}, []string{
			"Secret/ns/credentials (secret-not-base64.yaml): data.password: invalid base64 (format byte)",
		}},
		{"custom resource of the wrong type", []string{"crd-widget.yaml", "widget-size-string.yaml"}, []string{
			"Widget/ns/small (widget-size-string.yaml): spec.size: expected integer, got string",
		}},
		{"custom resource with an unknown field", []string{"crd-widget.yaml", "widget-unknown-field.yaml"}, []string{
			"Widget/ns/small (widget-unknown-field.yaml): spec.colour: unknown field",
		}},
		{"custom resource with null and a value outside its enum", []string{"crd-widget.yaml", "widget-null-size.yaml"}, []string{
			"Widget/ns/small (widget-null-size.yaml): spec.color: should be one of [red green blue]",
			"Widget/ns/small (widget-null-size.yaml): spec.size: expected integer, got null",
		}},
		{"custom resource int-or-string given a boolean", []string{"crd-widget.yaml", "widget-port-boolean.yaml"}, []string{
			"Widget/ns/small (widget-port-boolean.yaml): spec.port: expected integer or string, got boolean",
		}},
		{"custom resource without its CRD", []string{"widget.yaml"}, []string{
			"Widget/ns/small example.com/v1 (widget.yaml): unknown kind: no built-in schema and no CustomResourceDefinition in this build",
		}},
		{"unknown kind", []string{"gadget.yaml", "crd-widget.yaml"}, []string{
			"Gadget/ns/thing example.com/v1 (gadget.yaml): unknown kind: no built-in schema and no CustomResourceDefinition in this build",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs, sources := load(t, tt.files...)
			err := validate.Client(objs, sources)
			if err == nil {
				t.Fatal("want an error, got none")
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorNamesObjectFileAndField(t *testing.T) {
	t.Parallel()
	objs, sources := load(t, "deployment-replicas-string.yaml")
	err := validate.Client(objs, sources)
	var verr *validate.Error
	if !errors.As(err, &verr) {
		t.Fatalf("want a *validate.Error, got %T: %v", err, err)
	}
	want := validate.Error{
		Object:  object.ID{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "web"},
		Source:  "deployment-replicas-string.yaml",
		Field:   "spec.replicas",
		Message: "expected integer, got string",
	}
	if diff := cmp.Diff(want, *verr); diff != "" {
		t.Errorf("error mismatch (-want +got):\n%s", diff)
	}
}

func TestCheckKeepsUnknownKindsApart(t *testing.T) {
	t.Parallel()
	objs, sources := load(t, "gadget.yaml", "deployment-replicas-string.yaml")
	f, err := validate.Check(objs, sources)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.UnknownKinds) != 1 || f.UnknownKinds[0].Object.Kind != "Gadget" || f.UnknownKinds[0].APIVersion != "example.com/v1" {
		t.Errorf("unknown kinds: got %v, want the Gadget", f.UnknownKinds)
	}
	if len(f.Errors) != 1 || f.Errors[0].Field != "spec.replicas" {
		t.Errorf("errors: got %v, want spec.replicas only", f.Errors)
	}
	// A caller that only warns about unknown kinds still fails on the rest.
	var unknown *validate.UnknownKindError
	if err := f.Err(); !errors.As(err, &unknown) || unknown.Object.Name != "thing" {
		t.Errorf("Err(): want it to carry the *UnknownKindError, got %v", err)
	}
	if err := (&validate.Findings{Errors: f.Errors}).Err(); err == nil || errors.As(err, &unknown) {
		t.Errorf("errors alone: got %v", err)
	}
}

func TestClientCapsTheList(t *testing.T) {
	t.Parallel()
	var objs []*unstructured.Unstructured
	for i := range validate.MaxErrors + 7 {
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1",
			"kind":       "ConfigMap",
			"metadata":   map[string]any{"name": fmt.Sprintf("cm-%03d", i), "namespace": "ns"},
			"data":       map[string]any{"count": int64(i)},
		}})
	}
	err := validate.Client(objs, nil)
	lines := strings.Split(fmt.Sprint(err), "\n")
	if len(lines) != validate.MaxErrors+1 {
		t.Fatalf("got %d lines, want %d", len(lines), validate.MaxErrors+1)
	}
	if want := "ConfigMap/ns/cm-000: data.count: expected string, got integer"; lines[0] != want {
		t.Errorf("first line: got %q, want %q", lines[0], want)
	}
	if want := "and 7 more"; lines[len(lines)-1] != want {
		t.Errorf("last line: got %q, want %q", lines[len(lines)-1], want)
	}
}

func TestSecretValuesAreNotRepeated(t *testing.T) {
	t.Parallel()
	objs, sources := load(t, "secret-not-base64.yaml")
	err := validate.Client(objs, sources)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("want an error that does not show the value, got %v", err)
	}
}

func BenchmarkClient(b *testing.B) {
	objs := make([]*unstructured.Unstructured, 1000)
	for i := range objs {
		objs[i] = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1",
			"kind":       "ConfigMap",
			"metadata": map[string]any{
				"name":      fmt.Sprintf("settings-%04d", i),
				"namespace": "ns",
				"labels":    map[string]any{"app": "web"},
			},
			"data": map[string]any{"MODE": "production", "LEVEL": "info"},
		}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := validate.Client(objs, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func TestClientIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	objs, sources := load(t, "deployment.yaml", "crd-widget.yaml", "widget.yaml", "deployment-several-problems.yaml")
	want := validate.Client(objs, sources).Error()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := fmt.Sprint(validate.Client(objs, sources)); got != want {
				t.Errorf("concurrent run: got\n%s\nwant\n%s", got, want)
			}
		})
	}
	wg.Wait()
}
