package validate

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

//go:generate go run ./gen

// KubernetesVersion is the version whose built-in schemas Client checks
// against; the bundle is regenerated from hack/tools/kubernetes.
const KubernetesVersion = "v1.37.2"

//go:embed schemas/k8s-v1.37.2.json.gz
var bundleGz []byte

const (
	objectMetaDef = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	quantityDef   = "io.k8s.apimachinery.pkg.api.resource.Quantity"
	refPrefix     = "#/definitions/"

	// quantityPattern is what resource.ParseQuantity accepts, as CRD
	// generators publish it for resource.Quantity fields.
	quantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
)

// builtins holds the built-in schemas, ready for the validator: every $ref
// names an entry of defs, resolved lazily while validating.
type builtins struct {
	version string
	defs    map[string]*spec.Schema
	kinds   map[schema.GroupVersionKind]string // GVK → definition name
}

var (
	builtinOnce sync.Once
	builtinSet  *builtins
	builtinErr  error
)

// loadBuiltins decompresses and parses the embedded bundle once, on the
// first validation, so commands that never validate never pay for it.
func loadBuiltins() (*builtins, error) {
	builtinOnce.Do(func() {
		builtinSet, builtinErr = parseBundle(bundleGz)
	})
	return builtinSet, builtinErr
}

func parseBundle(gz []byte) (*builtins, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("schema bundle: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("schema bundle: %w", err)
	}
	var b struct {
		KubernetesVersion string                  `json:"kubernetesVersion"`
		Definitions       map[string]*spec.Schema `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("schema bundle: %w", err)
	}
	set := &builtins{version: b.KubernetesVersion, defs: b.Definitions, kinds: map[schema.GroupVersionKind]string{}}
	for name, s := range set.defs {
		for _, gvk := range groupVersionKinds(s) {
			set.kinds[gvk] = name
		}
		if name == quantityDef {
			// resource.Quantity unmarshals from a JSON number as well, and
			// from a string only in its own notation.
			s.Type = spec.StringOrArray{"string", "integer", "number"}
			s.Format = ""
			s.Pattern = quantityPattern
		}
		prepareBuiltin(s)
	}
	return set, nil
}

// prepareBuiltin adapts a built-in schema to how the API server decodes
// into Go types, which is stricter in some ways than plain OpenAPI and
// looser in others:
//   - null is the same as absent for every field;
//   - int-or-string fields take either;
//   - an object with declared properties takes no others (strict field
//     validation); one without (RawExtension, FieldsV1) takes anything.
func prepareBuiltin(s *spec.Schema) {
	walk(s, func(s *spec.Schema) {
		s.Nullable = true
		if s.Format == "int-or-string" {
			s.Type = spec.StringOrArray{"integer", "string"}
			s.Format = ""
		}
		if len(s.Properties) > 0 && s.AdditionalProperties == nil && !preservesUnknownFields(s) {
			s.AdditionalProperties = &spec.SchemaOrBool{Allows: false}
		}
	})
}

// walk calls fn on s and on every schema nested in it, parents first.
// $refs are not followed: each definition is walked on its own.
func walk(s *spec.Schema, fn func(*spec.Schema)) {
	if s == nil {
		return
	}
	fn(s)
	for name, p := range s.Properties {
		walk(&p, fn)
		s.Properties[name] = p
	}
	if s.Items != nil {
		walk(s.Items.Schema, fn)
		for i := range s.Items.Schemas {
			walk(&s.Items.Schemas[i], fn)
		}
	}
	if s.AdditionalProperties != nil {
		walk(s.AdditionalProperties.Schema, fn)
	}
	for _, list := range [][]spec.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			walk(&list[i], fn)
		}
	}
}

func preservesUnknownFields(s *spec.Schema) bool {
	v, _ := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields")
	return v
}

// groupVersionKinds reads the x-kubernetes-group-version-kind extension.
func groupVersionKinds(s *spec.Schema) []schema.GroupVersionKind {
	list, ok := s.Extensions["x-kubernetes-group-version-kind"].([]any)
	if !ok {
		return nil
	}
	var out []schema.GroupVersionKind
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if v != "" && k != "" {
			out = append(out, schema.GroupVersionKind{Group: g, Version: v, Kind: k})
		}
	}
	return out
}

// resolve follows s's $ref, if any, to its definition. A reference to a
// definition the bundle lacks accepts anything rather than failing every
// object that uses it.
func (b *builtins) resolve(s *spec.Schema) *spec.Schema {
	ref := s.Ref.String()
	if ref == "" {
		return s
	}
	if def, ok := b.defs[strings.TrimPrefix(ref, refPrefix)]; ok {
		return def
	}
	return &spec.Schema{}
}
