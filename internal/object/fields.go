package object

import (
	"slices"
	"strconv"
	"strings"
)

// FieldPath locates a field of an object: map keys and, in lists,
// indexes written in decimal (which of the two a step is, the object
// says: a list or a map).
type FieldPath []string

// String writes p as kubectl explains fields, with list indexes and
// keys that are not plain words in brackets:
// spec.containers[0].env[1].value, metadata.labels["app.kubernetes.io/name"].
func (p FieldPath) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case isIndex(s):
			b.WriteString("[" + s + "]")
		case isWord(s):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		default:
			b.WriteString("[" + strconv.Quote(s) + "]")
		}
	}
	return b.String()
}

// Child is p with one more step, in a new slice.
func (p FieldPath) Child(step string) FieldPath {
	return append(slices.Clip(p), step)
}

// Get returns the value at p in obj, and whether there is one.
func (p FieldPath) Get(obj map[string]any) (any, bool) {
	var v any = obj
	for _, step := range p {
		switch t := v.(type) {
		case map[string]any:
			e, ok := t[step]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func isIndex(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil && s != "" && s[0] != '+' && s[0] != '-'
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && (r == '-' || r >= '0' && r <= '9'):
		default:
			return false
		}
	}
	return true
}

// SecretFields say where one object holds values that came from a
// secret: decrypted from SOPS, or substituted (post-build) from a Secret
// or a decrypted source. Diffs and renderings hide those values and
// leave the rest of the object as it is.
type SecretFields struct {
	// Fields hold such a value, whole: a path may name a map or a list
	// (a value substituted as YAML flow syntax) or a number.
	Fields []FieldPath
	// Keys are map keys made of such a value; each path ends with the
	// key itself.
	Keys []FieldPath
}

// AddField records p as a field holding a secret value, once.
func (s *SecretFields) AddField(p FieldPath) { s.Fields = addPath(s.Fields, p) }

// AddKey records that the map key p ends with came from a secret, once.
func (s *SecretFields) AddKey(p FieldPath) { s.Keys = addPath(s.Keys, p) }

// Empty reports whether s records nothing; a nil s records nothing.
func (s *SecretFields) Empty() bool { return s == nil || len(s.Fields)+len(s.Keys) == 0 }

// Union is what s and o record together, in a new value; either may be
// nil.
func (s *SecretFields) Union(o *SecretFields) *SecretFields {
	out := &SecretFields{}
	for _, x := range []*SecretFields{s, o} {
		if x == nil {
			continue
		}
		for _, p := range x.Fields {
			out.AddField(p)
		}
		for _, p := range x.Keys {
			out.AddKey(p)
		}
	}
	return out
}

func addPath(ps []FieldPath, p FieldPath) []FieldPath {
	if slices.ContainsFunc(ps, func(q FieldPath) bool { return slices.Equal(p, q) }) {
		return ps
	}
	return append(ps, slices.Clone(p))
}

// Rekey moves the values of m to the IDs their objects have now (moved
// maps an old ID to its new one). All are taken out before any is put
// back, so that two objects trading names keep their own values.
func Rekey[V any](m map[ID]V, moved map[ID]ID) {
	if len(m) == 0 || len(moved) == 0 {
		return
	}
	found := map[ID]V{}
	for from := range moved {
		if v, ok := m[from]; ok {
			found[from] = v
			delete(m, from)
		}
	}
	for from, to := range moved {
		if v, ok := found[from]; ok {
			m[to] = v
		}
	}
}
