package object

import (
	"strconv"
	"strings"
)

// PointerTokens splits an RFC 6901 JSON pointer into its unescaped
// tokens; "" is the root (no tokens), and a pointer not starting with /
// is not one (false).
func PointerTokens(p string) ([]string, bool) {
	if p == "" {
		return nil, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, true
}

// PointerGet is the value at tokens of v (maps and lists, as decoded from
// JSON or YAML); false when there is none.
func PointerGet(v any, tokens []string) (any, bool) {
	for _, t := range tokens {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[t]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// PointerSet sets the value at tokens of obj, creating maps on the way
// (for a missing or null field); false when a list index is out of range
// or a value on the way is no container.
func PointerSet(obj map[string]any, tokens []string, value any) bool {
	var cur any = obj
	for i, t := range tokens {
		last := i == len(tokens)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[t] = value
				return true
			}
			next, ok := c[t]
			if !ok || next == nil {
				next = map[string]any{}
				c[t] = next
			}
			cur = next
		case []any:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(c) {
				return false
			}
			if last {
				c[n] = value
				return true
			}
			cur = c[n]
		default:
			return false
		}
	}
	return false
}

// PointerRemove removes the field at tokens of obj, reporting whether
// there was one; list items are not removed (it would shift the others).
func PointerRemove(obj map[string]any, tokens []string) bool {
	if len(tokens) == 0 {
		return false
	}
	parent, ok := PointerGet(obj, tokens[:len(tokens)-1])
	if !ok {
		return false
	}
	m, ok := parent.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := m[tokens[len(tokens)-1]]; !ok {
		return false
	}
	delete(m, tokens[len(tokens)-1])
	return true
}
