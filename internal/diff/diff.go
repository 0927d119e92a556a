// Package diff renders what changes between two states of an object as a
// unified diff of their YAML, with every value that came from a secret
// masked (by where it came from: see Secrets), and compares objects field
// by field for the three-way diff. Apply, the three-way diff and the
// reports share it; it talks to no cluster.
package diff

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Unified renders a unified diff of two objects as YAML, after removing
// server-managed noise and masking Secret values, SOPS ciphertext and what
// secrets names (see Secrets and the masks in mask.go). A nil before is
// creation.
func Unified(id object.ID, before, after *unstructured.Unstructured, secrets Secrets) string {
	return Between("live", "desired", id, before, after, secrets)
}

// Between is Unified with the sides named from and to,
// e.g. "base" and "head" for two renders of Git. A nil after is deletion.
func Between(from, to string, id object.ID, before, after *unstructured.Unstructured, secrets Secrets) string {
	var a, b string
	if after == nil {
		_, gone := maskedPair(nil, before, secrets)
		a = toYAML(gone)
	} else {
		before, after = maskedPair(before, after, secrets)
		if before != nil {
			a = toYAML(before)
		}
		b = toYAML(after)
	}
	shown := shownID(id, secrets.Fields)
	text, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        lines(a),
		B:        lines(b),
		FromFile: shown.String() + " (" + from + ")",
		ToFile:   shown.String() + " (" + to + ")",
		Context:  3,
	})
	return text
}

// lines splits text into lines; none for no text, not one empty line.
func lines(text string) []string {
	if text == "" {
		return nil
	}
	return difflib.SplitLines(text)
}

// maskedPair is before and after (nil before: after is new) without
// server-managed noise, with Secret values, SOPS ciphertext and what
// secrets names masked, as diffs show them. The objects given are not
// changed.
func maskedPair(before, after *unstructured.Unstructured, secrets Secrets) (*unstructured.Unstructured, *unstructured.Unstructured) {
	after = clean(after)
	if before != nil {
		before = clean(before)
	}
	return maskObjects(before, after, secrets)
}

// shownID is id as a diff's header names it: a name or namespace that
// came from a secret is masked there too.
func shownID(id object.ID, fields *object.SecretFields) object.ID {
	if fields.Empty() {
		return id
	}
	for _, p := range fields.Fields {
		switch {
		case slices.Equal(p, object.FieldPath{"metadata", "name"}):
			id.Name = Mask
		case slices.Equal(p, object.FieldPath{"metadata", "namespace"}):
			id.Namespace = Mask
		}
	}
	return id
}

// FieldsOn is fields, recorded on desired, as they are named in other,
// what the API server makes of desired (a dry-run's merged object): a
// list item that has a name is found by its name, since the server may
// have merged desired's items among others; any other by its index. A
// path other does not have is kept as it was.
func FieldsOn(fields *object.SecretFields, desired, other *unstructured.Unstructured) *object.SecretFields {
	if fields.Empty() || desired == nil || other == nil {
		return fields
	}
	out := &object.SecretFields{}
	for _, p := range fields.Fields {
		out.AddField(pathOn(p, desired.Object, other.Object))
	}
	for _, p := range fields.Keys {
		out.AddKey(pathOn(p, desired.Object, other.Object))
	}
	return out
}

func pathOn(p object.FieldPath, desired, other any) object.FieldPath {
	out := make(object.FieldPath, 0, len(p))
	for _, step := range p {
		switch d := desired.(type) {
		case map[string]any:
			o, _ := other.(map[string]any)
			desired, other = d[step], o[step]
		case []any:
			o, _ := other.([]any)
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(d) {
				return p
			}
			j := i
			if name, ok := itemName(d[i]); ok {
				j = slices.IndexFunc(o, func(e any) bool { n, ok := itemName(e); return ok && n == name })
			}
			if j < 0 || j >= len(o) {
				return p
			}
			step = strconv.Itoa(j)
			desired, other = d[i], o[j]
		default:
			return p
		}
		out = append(out, step)
	}
	return out
}

// itemName is the name of a list item, as containers, env variables,
// volumes and ports have one.
func itemName(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	name, ok := m["name"].(string)
	return name, ok
}

func clean(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	for _, f := range [][]string{
		{"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "uid"},
		{"metadata", "generation"}, {"metadata", "creationTimestamp"}, {"status"},
	} {
		unstructured.RemoveNestedField(u.Object, f...)
	}
	return u
}

func toYAML(u *unstructured.Unstructured) string {
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		return fmt.Sprintf("# cannot render: %v\n", err)
	}
	return string(data)
}
