package build

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/drone/envsubst"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// varName is the variable name syntax Flux accepts.
var varName = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)

// Variables are what post-build substitution substitutes.
type Variables struct {
	// Values are the variables' values, by name.
	Values map[string]string
	// Secret names the variables whose values came from a Secret or out
	// of SOPS: the fields they land in are recorded (see Substitute).
	Secret []string
	// Always substitutes even without values, so that ${VAR:=default}
	// forms apply (Flux's substituteStrategy: Always).
	Always bool
	// Root is the directory sources are relative to (the build's Root):
	// an object that fails substitution is then reported at the line of
	// the field holding the placeholder at fault, read from its file
	// there. Without it, at its file alone.
	Root string
}

// Substitute replaces variables in objs in place, with the semantics of
// Flux's post-build substitution (run it after decryption, as Flux does):
//
//   - ${VAR} takes the value of VAR (a bare $VAR is left alone); bash
//     forms such as ${VAR:=default} and ${VAR:-default} supply a default;
//     $${VAR} is written as a literal ${VAR}.
//   - A variable that is not defined and has no default becomes the empty
//     string. This is Flux's default (its StrictPostBuildSubstitutions
//     feature gate, which makes it an error, is off by default). Objects
//     are re-rendered as YAML first, so quotes in the source file are gone:
//     a field that was only "${VAR}" becomes null, as in Flux.
//   - Newlines are removed from values, as Flux does, so a value cannot
//     break the YAML it lands in.
//   - Objects annotated or labelled substitute: disabled under
//     object.AnnotationPrefix or object.FluxAnnotationPrefix are left
//     alone.
//   - With no vars at all nothing is substituted, not even $${VAR}, as
//     in Flux without postBuild, unless vars.Always (Flux's
//     substituteStrategy: Always, where defaults still apply).
//
// Substitution works on each object's YAML text, which is then parsed
// again, so it can change any field, the name included; sources and
// secret are re-keyed when an object's identity changes. A field (or map
// key) whose text refers to a variable of vars.Secret is added to the
// object's entry in secret, under its name after substitution, so that
// what shows objects can hide the value wherever it went; secret may be
// nil when no variable is secret. Errors name the object and its source
// file; all failing objects are reported together.
func Substitute(objs []*unstructured.Unstructured, vars Variables, sources map[object.ID]string, secret map[object.ID]*object.SecretFields) error {
	if len(vars.Values) == 0 && !vars.Always {
		return nil
	}
	values := make(map[string]string, len(vars.Values))
	for _, k := range sortedKeys(vars.Values) {
		if !varName.MatchString(k) {
			return fmt.Errorf("variable name %q is invalid: it must match %s", k, varName)
		}
		values[k] = strings.ReplaceAll(vars.Values[k], "\n", "")
	}
	secretVars := map[string]bool{}
	for _, name := range vars.Secret {
		secretVars[name] = true
	}
	var errs []error
	moved := map[object.ID]object.ID{}
	for _, u := range objs {
		if substitutionDisabled(u) {
			continue
		}
		id := object.IDOf(u)
		var found *object.SecretFields
		if len(secretVars) > 0 {
			found = secretFields(u.Object, values, secretVars)
		}
		if err := substituteObject(u, values); err != nil {
			err = fmt.Errorf("%s in %s: %w", id, sourceName(sources, id), err)
			if src := sources[id]; src != "" && !isRemoteSource(src) {
				err = &FileError{File: src, Line: placeholderLine(vars.Root, src, id, values), Err: err}
			}
			errs = append(errs, err)
			continue
		}
		if !found.Empty() && secret != nil {
			secret[id] = secret[id].Union(found)
		}
		if nid := object.IDOf(u); nid != id {
			moved[id] = nid
		}
	}
	// Re-key after the loop so that two objects trading names keep theirs.
	object.Rekey(sources, moved)
	object.Rekey(secret, moved)
	return errors.Join(errs...)
}

// secretFields lists, as they are named once substituted, the fields and
// map keys of obj whose text refers to a variable named in secret. Each
// string is evaluated on its own with a mapping that notes the names it
// is asked for: envsubst asks for exactly the variables the text uses,
// in ${VAR:=default} forms too, and not for an escaped $${VAR}.
func secretFields(obj map[string]any, values map[string]string, secret map[string]bool) *object.SecretFields {
	out := &object.SecretFields{}
	refersToSecret := func(s string) bool {
		if !strings.Contains(s, "$") {
			return false
		}
		found := false
		_, err := envsubst.Eval(s, func(name string) string {
			found = found || secret[name]
			return values[name]
		})
		if err != nil {
			// Text envsubst cannot parse alone may still be substituted
			// as part of the whole document: any mention counts.
			for name := range secret {
				if strings.Contains(s, name) {
					return true
				}
			}
		}
		return found
	}
	substituted := func(s string) string {
		if !strings.Contains(s, "$") {
			return s
		}
		if v, err := envsubst.Eval(s, func(name string) string { return values[name] }); err == nil {
			return v
		}
		return s
	}
	var walk func(path object.FieldPath, v any)
	walk = func(path object.FieldPath, v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(t) {
				name := path.Child(substituted(k))
				if refersToSecret(k) {
					out.AddKey(name)
				}
				walk(name, t[k])
			}
		case []any:
			for i, e := range t {
				walk(path.Child(strconv.Itoa(i)), e)
			}
		case string:
			if refersToSecret(t) {
				out.AddField(path)
			}
		}
	}
	walk(nil, obj)
	return out
}

// substitutionDisabled reports whether u opts out, by annotation or (as
// Flux also accepts) by label.
func substitutionDisabled(u *unstructured.Unstructured) bool {
	if v, ok := object.Setting(u.GetAnnotations(), object.SubstituteKey); ok {
		return v == object.Disabled
	}
	v, _ := object.Setting(u.GetLabels(), object.SubstituteKey)
	return v == object.Disabled
}

// substituteObject runs envsubst over u's YAML and replaces u's content
// only if the result is still a valid object.
func substituteObject(u *unstructured.Unstructured, values map[string]string) error {
	// kyaml does not fold long lines, so a ${VAR:=some default} is never
	// split across lines before envsubst sees it.
	text, err := kyaml.Marshal(u.Object)
	if err != nil {
		return err
	}
	var unset []string // named, without a value: the likely culprits
	out, err := envsubst.Eval(string(text), func(name string) string {
		v, ok := values[name]
		if !ok && !slices.Contains(unset, name) {
			unset = append(unset, name)
		}
		return v
	})
	if err != nil {
		return fmt.Errorf("variable substitution failed: %w", err)
	}
	data, err := yaml.YAMLToJSON([]byte(out))
	if err != nil {
		return fmt.Errorf("the substituted YAML is invalid (check values that contain YAML syntax): %w%s", err, withoutValue(unset))
	}
	var obj map[string]interface{}
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("the substituted YAML is invalid: %w%s", err, withoutValue(unset))
	}
	if err := checkObject(obj); err != nil {
		return fmt.Errorf("after substitution: %w%s", err, withoutValue(unset))
	}
	u.Object = obj
	return nil
}

// withoutValue names, for an error, the variables an object uses that
// have no value (they became empty strings, or their default).
func withoutValue(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf(" (no value for %s)", strings.Join(names, ", "))
}

// sourceName is the source file of id for messages.
func sourceName(sources map[object.ID]string, id object.ID) string {
	if src := sources[id]; src != "" {
		return src
	}
	return "unknown file"
}
