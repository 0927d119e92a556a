package validate

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// formats are kube-openapi's string formats, except that "byte" accepts
// exactly what encoding/json decodes into a []byte, as the API server
// does: the empty string included.
var formats = func() strfmt.Registry {
	r := strfmt.NewFormats()
	b64 := strfmt.Base64{}
	r.Add("byte", &b64, func(s string) bool {
		_, err := base64.StdEncoding.DecodeString(s)
		return err == nil
	})
	return r
}()

// validate runs kube-openapi's schema validator over obj and turns what it
// reports into Errors naming id and source.
func (b *builtins) validate(root *spec.Schema, obj map[string]any, id object.ID, source string) (out []*Error) {
	defer func() {
		// The validator panics on a schema it cannot handle (an unresolved
		// $ref); report that on the object instead of crashing the run.
		if r := recover(); r != nil {
			out = append(out, &Error{Object: id, Source: source, Message: fmt.Sprintf("schema validation failed: %v", r)})
		}
	}()
	res := validate.NewSchemaValidator(root, nil, "", formats, b.resolving()).Validate(obj)
	if res == nil {
		return nil
	}
	for _, err := range flatten(res.Errors) {
		field, msg := describe(err)
		out = append(out, &Error{Object: id, Source: source, Field: field, Message: msg})
	}
	return out
}

// resolving makes every validator the root one creates for a field or an
// item follow $refs into b's definitions first. kube-openapi's validator
// does not resolve references itself, and expanding them ahead of time
// would copy ObjectMeta and PodSpec into every kind (and never end for
// recursive ones such as JSONSchemaProps).
func (b *builtins) resolving() validate.Option {
	var opt validate.Option
	opt = func(o *validate.SchemaValidatorOptions) {
		o.NewValidatorForField = func(_ string, s *spec.Schema, root any, path string, formats strfmt.Registry, _ ...validate.Option) validate.ValueValidator {
			return validate.NewSchemaValidator(b.resolve(s), root, path, formats, opt)
		}
		o.NewValidatorForIndex = func(_ int, s *spec.Schema, root any, path string, formats strfmt.Registry, _ ...validate.Option) validate.ValueValidator {
			return validate.NewSchemaValidator(b.resolve(s), root, path, formats, opt)
		}
	}
	return opt
}

// flatten opens composite errors (anyOf, oneOf) into their parts.
func flatten(errs []error) []error {
	var out []error
	for _, err := range errs {
		var c *openapierrors.CompositeError
		if errors.As(err, &c) && len(c.Errors) > 0 {
			out = append(out, flatten(c.Errors)...)
			continue
		}
		out = append(out, err)
	}
	return out
}

// describe splits a validator error into the field path and a message that
// does not repeat it.
func describe(err error) (field, msg string) {
	var v *openapierrors.Validation
	if !errors.As(err, &v) {
		// Composite errors read "\"<path>\" must validate ...".
		msg = err.Error()
		if rest, ok := strings.CutPrefix(msg, `"`); ok {
			if path, verb, ok := strings.Cut(rest, `" `); ok {
				return strings.TrimPrefix(path, "."), verb
			}
		}
		return "", msg
	}
	field = strings.TrimPrefix(v.Name, ".")
	switch v.Code() {
	case openapierrors.InvalidTypeCode:
		want := typeNames(v.Error())
		if !jsonTypes(want) {
			// A format check: Value is the field's value, which may be a
			// secret, so it is never repeated.
			if want == "byte" {
				return field, "invalid base64 (format byte)"
			}
			return field, "invalid value for format " + want
		}
		if got, ok := v.Value.(string); ok {
			return field, fmt.Sprintf("expected %s, got %s", strings.ReplaceAll(want, ",", " or "), got)
		}
	case openapierrors.RequiredFailCode:
		return field, "required field is missing"
	case openapierrors.PatternFailCode:
		if strings.Contains(v.Error(), quantityPattern) {
			return field, "invalid quantity"
		}
	case openapierrors.UnallowedPropertyCode:
		key, _ := v.Value.(string)
		if field == "" {
			return key, "unknown field"
		}
		return field + "." + key, "unknown field"
	}
	// Other messages read "<path> in body should ..."; keep the verb part.
	msg = v.Error()
	for _, prefix := range []string{v.Name + " in " + v.In + " ", v.Name + " "} {
		if strings.HasPrefix(msg, prefix) {
			return field, strings.TrimPrefix(msg, prefix)
		}
	}
	return field, msg
}

// jsonTypes says whether list, comma-separated, names only JSON types.
func jsonTypes(list string) bool {
	for _, t := range strings.Split(list, ",") {
		switch t {
		case "string", "integer", "number", "boolean", "object", "array", "null":
		default:
			return false
		}
	}
	return true
}

// typeNames pulls the expected type list out of "<path> in body must be of
// type <types>: ..." since the error keeps it nowhere else.
func typeNames(msg string) string {
	const marker = "must be of type "
	i := strings.Index(msg, marker)
	if i < 0 {
		return "another type"
	}
	rest := msg[i+len(marker):]
	if j := strings.IndexAny(rest, ": "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
