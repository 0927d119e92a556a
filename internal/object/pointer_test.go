package object

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPointer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pointer string
		tokens  []string
		ok      bool
	}{
		{"", nil, true},
		{"/spec/replicas", []string{"spec", "replicas"}, true},
		{"/metadata/annotations/a~1b~0c", []string{"metadata", "annotations", "a/b~c"}, true},
		{"spec/replicas", nil, false},
	} {
		tokens, ok := PointerTokens(tc.pointer)
		if ok != tc.ok || !cmp.Equal(tokens, tc.tokens) {
			t.Errorf("PointerTokens(%q) = %q, %v; want %q, %v", tc.pointer, tokens, ok, tc.tokens, tc.ok)
		}
	}

	obj := map[string]any{"spec": map[string]any{"list": []any{"a", "b"}, "gone": nil}}
	for _, tc := range []struct {
		tokens []string
		set    bool
	}{
		{[]string{"spec", "replicas"}, true},
		{[]string{"spec", "list", "1"}, true},
		{[]string{"spec", "list", "2"}, false},      // out of range
		{[]string{"spec", "list", "0", "x"}, false}, // no container on the way
		{[]string{"spec", "gone", "x"}, true},       // null becomes a map
		{[]string{"status", "ready"}, true},
	} {
		if got := PointerSet(obj, tc.tokens, int64(3)); got != tc.set {
			t.Errorf("PointerSet(%q) = %v, want %v", tc.tokens, got, tc.set)
		}
		if v, ok := PointerGet(obj, tc.tokens); ok != tc.set || (ok && v != int64(3)) {
			t.Errorf("PointerGet(%q) after set = %v, %v", tc.tokens, v, ok)
		}
	}
	if !PointerRemove(obj, []string{"spec", "replicas"}) || PointerRemove(obj, []string{"spec", "replicas"}) {
		t.Error("PointerRemove removes a field once")
	}
	if PointerRemove(obj, []string{"spec", "list", "0"}) || PointerRemove(obj, nil) {
		t.Error("PointerRemove removed a list item or the root")
	}
	if _, ok := PointerGet(obj, []string{"spec", "replicas"}); ok {
		t.Error("the removed field is still there")
	}
}
