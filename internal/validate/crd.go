package validate

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// crdSchemas returns the schema of every served version of every
// CustomResourceDefinition in objs, keyed by the custom resource's GVK. A
// CRD whose schema cannot be read is reported on the CRD.
func crdSchemas(objs []*unstructured.Unstructured, sources map[object.ID]string) (map[schema.GroupVersionKind]*spec.Schema, []*Error) {
	out := map[schema.GroupVersionKind]*spec.Schema{}
	var errs []*Error
	for _, u := range objs {
		if u.GroupVersionKind() != crdGVK {
			continue
		}
		id := object.IDOf(u)
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		if group == "" || kind == "" {
			// The CRD's own validation reports the missing fields.
			continue
		}
		for i, v := range versions {
			vm, ok := v.(map[string]any)
			if !ok {
				continue
			}
			name, _, _ := unstructured.NestedString(vm, "name")
			served, _, _ := unstructured.NestedBool(vm, "served")
			if name == "" || !served {
				continue
			}
			s, err := crdVersionSchema(vm)
			if err != nil {
				errs = append(errs, &Error{Object: id, Source: sources[id],
					Field:   fmt.Sprintf("spec.versions[%d].schema.openAPIV3Schema", i),
					Message: err.Error()})
				continue
			}
			out[schema.GroupVersionKind{Group: group, Version: name, Kind: kind}] = s
		}
	}
	return out, errs
}

// crdVersionSchema reads one version's openAPIV3Schema. JSONSchemaProps
// marshal to OpenAPI v3 schema JSON, x-kubernetes-* extensions included,
// so spec.Schema reads them as they are.
func crdVersionSchema(version map[string]any) (*spec.Schema, error) {
	raw, found, err := unstructured.NestedMap(version, "schema", "openAPIV3Schema")
	if err != nil {
		return nil, err
	}
	s := &spec.Schema{}
	if !found {
		// No schema: the API server keeps whatever fields it is sent.
		s.Extensions = spec.Extensions{}
		s.Extensions.Add("x-kubernetes-preserve-unknown-fields", true)
	} else {
		b, err := json.Marshal(raw)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, s); err != nil {
			return nil, err
		}
	}
	prepareCRD(s)
	return s, nil
}

// prepareCRD adapts a custom resource's schema to what the API server
// does with it: apiVersion, kind and metadata are its own to check
// (metadata as ObjectMeta), embedded resources get the same three, and
// fields the schema does not declare are unknown unless
// x-kubernetes-preserve-unknown-fields says otherwise (structural pruning).
func prepareCRD(root *spec.Schema) {
	addTypeMeta(root)
	walk(root, func(s *spec.Schema) {
		if v, _ := s.Extensions.GetBool("x-kubernetes-int-or-string"); v && len(s.Type) == 0 {
			// The anyOf that usually comes with it says the same, in
			// three errors instead of one.
			s.Type = spec.StringOrArray{"integer", "string"}
			s.AnyOf = nil
		}
		if v, _ := s.Extensions.GetBool("x-kubernetes-embedded-resource"); v && s != root {
			addTypeMeta(s)
		}
		if (s.Type.Contains("object") || len(s.Properties) > 0) && s.AdditionalProperties == nil && !preservesUnknownFields(s) {
			s.AdditionalProperties = &spec.SchemaOrBool{Allows: false}
		}
	})
}

func addTypeMeta(s *spec.Schema) {
	if s.Properties == nil {
		s.Properties = map[string]spec.Schema{}
	}
	s.Properties["apiVersion"] = *spec.StringProperty()
	s.Properties["kind"] = *spec.StringProperty()
	s.Properties["metadata"] = *spec.RefSchema(refPrefix + objectMetaDef)
}
