package object

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yamlv2 "go.yaml.in/yaml/v2"
)

// trickyStrings are strings YAML writes each its own way: plain, single-
// or double-quoted, literal with hints, folded past 80 columns, or read
// as something other than a string when plain.
var trickyStrings = []string{
	"", "a", "web", "true", "yes", "No", "on", "OFF", "y", "n", "~", "null", "NULL", "<<", ".nan", ".Inf", "-.inf", "+.INF",
	"0", "7", "-7", "+7", "007", "0777", "0x1F", "0o17", "0b101", "-0b101", "0b2", "1_000", "1__0", "_1", "1e3", "1E-3", "1.", ".5", "-.5", "+.5", ".", "-", "+", "1.2.3", "1.0",
	"9223372036854775807", "9223372036854775808", "18446744073709551616", "1e400", "0x", "-0x10",
	"2026-11-24", "2026-11-24T10:00:00Z", "2026-11-24 10:00:00", "2026-1-2", "2026-13-45", "12:30", "1:20:30.5", "-1:20", "190:20:30", "1:70",
	"a: b", "a:b", "a:", ":a", ": a", "?a", "? a", "-a", "- a", "a #b", "a#b", "#a", "a # b", "a,b", ",a", "[a]", "a[b]", "{a}", "a{b}", "&a", "*a", "!a", "|a", ">a", "'a", "\"a", "%a", "@a", "`a",
	"---", "---a", "...", "...a", "--", "a'b", "a\"b", "a\\b", "'", "\"", "\\",
	" lead", "trail ", " both ", "in side", "two  spaces", "  ",
	"line\n", "two\nlines", "two\nlines\n", "\nlead", "\n", "keep\n\n", "a\n\nb\n", "space \nbreak", "break\n space", " lead\nline", "trail\nline ",
	"sha256:0123456789abcdef", "image:1.2.3", "http://example.com/a?b=c#d", "key=value,other=1", "a=b c=d",
	strings.Repeat("word ", 30), strings.Repeat("x", 100) + " " + strings.Repeat("y", 10), "a " + strings.Repeat("b", 90) + " c d e",
	strings.Repeat("word  ", 20), strings.Repeat("'quoted' ", 15), strings.Repeat("\"dq\" ", 25), "trail " + strings.Repeat("z ", 50),
	"tab\there", "caf\u00e9", "\x7f",
	"feature.flags=a,b,c\nlog.level=info\n", "\nfeature.flags=a,b,c\nlog.level=info\nindex=0", "#!/bin/sh\nset -e\necho hi\n",
}

// TestEmitYAMLIsYAMLv2s writes objects made of tricky strings, keys in
// yaml.v2's order and every shape of nesting with emitYAML and with
// yaml.v2: the same bytes whenever emitYAML writes one.
func TestEmitYAMLIsYAMLv2s(t *testing.T) {
	t.Parallel()
	var objs []map[string]any
	for _, s := range trickyStrings {
		objs = append(objs, map[string]any{
			"value": s, "list": []any{s, []any{s}, map[string]any{"k": s}}, "deep": map[string]any{"a": map[string]any{"b": []any{[]any{s}}}},
		})
		if !strings.Contains(s, "\n") {
			objs = append(objs, map[string]any{s: s, "z" + s: map[string]any{s: []any{s}}})
		}
	}
	objs = append(objs,
		map[string]any{"a10": 1.5, "a9": int64(-1), "a01": nil, "a1": true, "A": false, "_x": math.MaxFloat64, "b": 1e21, "10": int64(1), "9": 1e-7, "x-0": "a", "x-00": "b", "x0": "c", "x00": "d", "y": 1e6},
		map[string]any{"empty": map[string]any{}, "none": []any{}, "nil": nil, "nilMap": map[string]any(nil), "nilList": []any(nil), "list": []any{map[string]any{}, []any{}, nil, []any{map[string]any{"a": []any{"b"}}}}},
		map[string]any{"long-" + strings.Repeat("k", 130): "v"},
		map[string]any{},
	)
	rng := rand.New(rand.NewPCG(36, 2))
	for range 3000 {
		objs = append(objs, randomMap(rng, 0))
	}
	direct := 0
	for _, m := range objs {
		want, err := yamlv2.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := emitYAML(m)
		if !ok {
			continue
		}
		direct++
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("emitYAML differs from yaml.v2 (-yaml.v2 +emitYAML):\n%s", diff)
		}
	}
	t.Logf("emitYAML wrote %d of %d objects itself", direct, len(objs))
	if direct < len(objs)*3/4 {
		t.Errorf("emitYAML wrote %d of %d objects itself", direct, len(objs))
	}
}

// TestEmitYAMLLeaves leaves to yaml.v2 what it does not write itself.
func TestEmitYAMLLeaves(t *testing.T) {
	t.Parallel()
	for name, m := range map[string]map[string]any{
		"not ASCII":             {"a": "caf\u00e9"},
		"a tab":                 {"a": "x\ty"},
		"a long key":            {strings.Repeat("k", 129): "v"},
		"a key of lines":        {"a\nb": "v"},
		"kept line breaks":      {"a": "x\n\n"},
		"a space before breaks": {"a": "x \ny"},
		"an int":                {"a": 1},
		"a key of many digits":  {"a" + strings.Repeat("9", 19): "v", "a1": "w"},
	} {
		if _, ok := emitYAML(m); ok {
			t.Errorf("%s: emitYAML wrote it", name)
		}
	}
}

func randomMap(rng *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for range rng.IntN(6) {
		m[randomString(rng, true)] = randomValue(rng, depth+1)
	}
	return m
}

func randomValue(rng *rand.Rand, depth int) any {
	n := 9
	if depth > 4 {
		n = 5
	}
	switch rng.IntN(n) {
	case 0:
		return int64(rng.IntN(2000) - 1000)
	case 1:
		return rng.Float64() * math.Pow(10, float64(rng.IntN(30)-10))
	case 2:
		return rng.IntN(2) == 0
	case 3:
		return nil
	case 4, 5:
		return randomString(rng, false)
	case 6, 7:
		return randomMap(rng, depth)
	}
	var l []any
	for range rng.IntN(4) {
		l = append(l, randomValue(rng, depth+1))
	}
	return l
}

func randomString(rng *rand.Rand, key bool) string {
	if rng.IntN(3) == 0 {
		s := trickyStrings[rng.IntN(len(trickyStrings))]
		if !key || !strings.Contains(s, "\n") {
			return s
		}
	}
	const alphabet = "aZ09 :#-'\"\\.,[]{}&*!|>%@`?_+~"
	b := make([]byte, rng.IntN(100))
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
		if !key && rng.IntN(20) == 0 {
			b[i] = '\n'
		}
	}
	return string(b)
}

// FuzzEmitYAML: whatever emitYAML writes, yaml.v2 writes the same.
func FuzzEmitYAML(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add("key", "a10", s)
	}
	f.Fuzz(func(t *testing.T, k, k2, v string) {
		m := map[string]any{k: v, k2: int64(1), "a9": nil, "list": []any{v, map[string]any{k: []any{v}}}, "nested": map[string]any{"a": map[string]any{k: v, k2: v}}}
		got, ok := emitYAML(m)
		if !ok {
			return
		}
		want, err := yamlv2.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("emitYAML differs from yaml.v2 (-yaml.v2 +emitYAML):\n%s", cmp.Diff(string(want), string(got)))
		}
	})
}
