package diff

import (
	"encoding/json"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FieldChange is one field that differs between two states of an object.
// Values are rendered as FieldValue does; "" is a field that is absent.
type FieldChange struct {
	Field    string
	From, To string
}

// FieldChanges lists the fields in which after differs from before, leaf
// by leaf, in path order, after removing server-managed noise and masking
// secrets as diffs do (secrets.Fields as recorded on after). A list of
// another length compares item by item.
func FieldChanges(before, after *unstructured.Unstructured, secrets Secrets) []FieldChange {
	before, after = maskedPair(before, after, secrets)
	var out []FieldChange
	walkChanges("", before.Object, after.Object, true, true, &out)
	return out
}

// walkChanges appends the leaves under path where b and a differ; hasB
// and hasA say whether each side has the field at all.
func walkChanges(path string, b, a any, hasB, hasA bool, out *[]FieldChange) {
	bm, bIsMap := b.(map[string]any)
	am, aIsMap := a.(map[string]any)
	if bIsMap && aIsMap {
		keys := make([]string, 0, len(bm)+len(am))
		for k := range bm {
			keys = append(keys, k)
		}
		for k := range am {
			if _, ok := bm[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			bv, inB := bm[k]
			av, inA := am[k]
			walkChanges(joinKey(path, k), bv, av, inB, inA, out)
		}
		return
	}
	bl, bIsList := b.([]any)
	al, aIsList := a.([]any)
	if bIsList && aIsList {
		for i := range max(len(bl), len(al)) {
			var bv, av any
			if i < len(bl) {
				bv = bl[i]
			}
			if i < len(al) {
				av = al[i]
			}
			walkChanges(path+"["+strconv.Itoa(i)+"]", bv, av, i < len(bl), i < len(al), out)
		}
		return
	}
	if hasA == hasB && reflect.DeepEqual(a, b) {
		return
	}
	*out = append(*out, FieldChange{Field: path, From: value(b, hasB), To: value(a, hasA)})
}

// plainKey is a map key a path shows after a dot.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func joinKey(path, k string) string {
	if !plainKey.MatchString(k) {
		return path + "[" + strconv.Quote(k) + "]"
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

func value(v any, has bool) string {
	if !has {
		return ""
	}
	return FieldValue(v)
}

// FieldValue renders a field's value for people: a string as it is (an
// empty one as ""), anything else as JSON.
func FieldValue(v any) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return "(cannot render)"
	}
	return string(data)
}

// Leaves are the paths of u's leaf fields (scalars, empty maps and
// lists), in FieldChanges' notation.
func Leaves(u *unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if len(t) > 0 {
				for k, e := range t {
					walk(joinKey(path, k), e)
				}
				return
			}
		case []any:
			if len(t) > 0 {
				for i, e := range t {
					walk(path+"["+strconv.Itoa(i)+"]", e)
				}
				return
			}
		}
		out[path] = true
	}
	walk("", clean(u).Object)
	return out
}

// OwnedFields are the fields of u that manager owns through server-side
// apply (its managedFields entry of operation Apply), in FieldChanges'
// notation: true for the leaves it set and the lists, maps and values it
// owns whole; false for a map or list item it owns as such (FieldsV1's
// "."), which says nothing of the fields inside. List items are found in
// u by their keys (k:), values (v:) or indexes (i:); an item u no longer
// holds owns nothing.
func OwnedFields(u *unstructured.Unstructured, manager string) map[string]bool {
	out := map[string]bool{}
	for _, mf := range u.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != "Apply" || mf.FieldsV1 == nil {
			continue
		}
		var set map[string]any
		if err := json.Unmarshal(mf.FieldsV1.Raw, &set); err != nil {
			continue
		}
		ownedUnder(set, u.Object, "", out)
	}
	return out
}

// ownedUnder adds the paths set (a FieldsV1 node) owns in v, at path.
func ownedUnder(set map[string]any, v any, path string, out map[string]bool) {
	for k, child := range set {
		sub, _ := child.(map[string]any)
		if k == "." {
			if !out[path] {
				out[path] = false
			}
			continue
		}
		var p string
		var next any
		switch kind, arg := k[:min(2, len(k))], k[min(2, len(k)):]; kind {
		case "f:":
			m, _ := v.(map[string]any)
			p, next = joinKey(path, arg), m[arg]
		case "k:", "v:", "i:":
			list, _ := v.([]any)
			i := itemIndex(list, kind, arg)
			if i < 0 {
				continue
			}
			p, next = path+"["+strconv.Itoa(i)+"]", list[i]
		default:
			continue
		}
		if len(sub) == 0 {
			out[p] = true
			continue
		}
		ownedUnder(sub, next, p, out)
	}
}

// itemIndex finds the item of list a FieldsV1 list element names: by its
// key fields (k:{"name":"web"}), its value (v:"a"), or its index (i:0);
// -1 when there is none.
func itemIndex(list []any, kind, arg string) int {
	switch kind {
	case "i:":
		i, err := strconv.Atoi(arg)
		if err != nil || i < 0 || i >= len(list) {
			return -1
		}
		return i
	case "v:":
		var want any
		if json.Unmarshal([]byte(arg), &want) != nil {
			return -1
		}
		for i, item := range list {
			if sameJSON(item, want) {
				return i
			}
		}
	case "k:":
		var keys map[string]any
		if json.Unmarshal([]byte(arg), &keys) != nil {
			return -1
		}
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			match := true
			for k, want := range keys {
				if !sameJSON(m[k], want) {
					match = false
					break
				}
			}
			if match {
				return i
			}
		}
	}
	return -1
}

// sameJSON compares values as JSON, so that 80 read from an object
// (int64) equals 80 read from managedFields (float64).
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// Covers reports whether owned (see OwnedFields) covers the field at
// path: the field itself, or a map, list or value holding it that is
// owned whole.
func Covers(owned map[string]bool, path string) bool {
	if _, ok := owned[path]; ok {
		return true
	}
	for _, p := range prefixes(path) {
		if owned[p] {
			return true
		}
	}
	return false
}

// prefixes are the paths of path's parents, then path: a.b[0]["x.y"]
// gives a, a.b, a.b[0] and itself. A quoted key's dots and brackets are
// not boundaries.
func prefixes(path string) []string {
	var out []string
	quoted, escaped := false, false
	for i, c := range path {
		switch {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case !quoted && (c == '.' || c == '[') && i > 0:
			out = append(out, path[:i])
		}
	}
	return append(out, path)
}

// FieldAt is the value of u's field at path (FieldChanges' notation),
// rendered and masked as FieldChanges renders values; "" when u has no
// such field.
func FieldAt(u *unstructured.Unstructured, path string, secrets Secrets) string {
	_, m := maskedPair(nil, u, secrets)
	var v any = m.Object
	prev := 0
	for _, p := range prefixes(path) {
		seg := strings.TrimPrefix(path[prev:len(p)], ".")
		prev = len(p)
		if inner, ok := strings.CutPrefix(seg, "["); ok {
			inner = strings.TrimSuffix(inner, "]")
			if key, err := strconv.Unquote(inner); err == nil {
				seg = key
			} else if i, err := strconv.Atoi(inner); err == nil {
				list, _ := v.([]any)
				if i < 0 || i >= len(list) {
					return ""
				}
				v = list[i]
				continue
			}
		}
		obj, _ := v.(map[string]any)
		next, ok := obj[seg]
		if !ok {
			return ""
		}
		v = next
	}
	return FieldValue(v)
}

// Related reports whether two paths are the same field or one holds the
// other.
func Related(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || strings.HasPrefix(b, a+".") || strings.HasPrefix(b, a+"[")
}
