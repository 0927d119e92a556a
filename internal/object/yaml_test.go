package object

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/ssa/utils"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ToYAML writes what sigs.k8s.io/yaml writes, for every manifest of the
// repository's testdata and for the scalars where YAML and JSON differ.
func TestToYAMLWritesWhatTheJSONWayWrites(t *testing.T) {
	t.Parallel()
	var objs []*unstructured.Unstructured
	root := filepath.Join("..", "..")
	for _, dir := range []string{"testdata", filepath.Join("cmd", "kustomize-deploy", "testdata"), "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			read, err := utils.ReadObjects(f)
			if err == nil { // templates and broken fixtures aside
				objs = append(objs, read...)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(objs) < 100 {
		t.Fatalf("only %d objects read from testdata", len(objs))
	}
	objs = append(objs, configMap("scalars", map[string]any{
		"bools":    []any{true, false, "true", "yes", "on", "~", "null", ""},
		"numbers":  []any{int64(0), int64(-7), int64(math.MaxInt64), 0.5, -1.25e-7, 1e21, math.MaxFloat64, "1", "0x1F", "1e3", "1_000", ".5"},
		"strings":  []any{"a: b", "- x", "#x", "multi\nline\n", "  lead", "trail  ", "quote'\"", "tab\t", "\u00e9\u4e16", "<&>", "{a}", "[a]", "@x", "`x", "%x", "!x", "*x", "&x", "|", ">", "?", "10:20", "2026-11-24", strings.Repeat("long ", 40)},
		"empty":    map[string]any{},
		"none":     nil,
		"list":     []any{},
		"nested":   []any{map[string]any{"b": int64(1), "a": []any{map[string]any{}}}},
		"keys":     map[string]any{"10": "x", "9": "y", "a1": "z", "A": "w", "": "empty", "yes": "k", "a b": "s"},
		"invalid":  "\xff\xfe",
		"cipher\n": "key with a newline",
	}))
	want, err := utils.ObjectsToYAML(objs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ToYAML(objs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToYAML differs from sigs.k8s.io/yaml (-want +got):\n%s", diff)
	}
}

func TestPlain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		v    any
		want bool
	}{
		{"an object", map[string]any{"a": []any{int64(1), 0.5, "s", true, nil}}, true},
		{"invalid UTF-8 value", map[string]any{"a": "\xff"}, false},
		{"invalid UTF-8 key", map[string]any{"\xff": "a"}, false},
		{"an int, not int64", map[string]any{"a": 1}, false},
		{"a typed map", map[string]any{"a": map[string]string{}}, false},
	} {
		if got := plain(tc.v); got != tc.want {
			t.Errorf("%s: plain = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// BenchmarkToYAML writes 300 objects, as `build` of a large chart does.
func BenchmarkToYAML(b *testing.B) {
	objs := make([]*unstructured.Unstructured, 300)
	for i := range objs {
		objs[i] = configMap("c", map[string]any{"x": strings.Repeat("y", 200), "n": int64(i)})
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := ToYAML(objs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("through JSON", func(b *testing.B) {
		for b.Loop() {
			if _, err := utils.ObjectsToYAML(objs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
