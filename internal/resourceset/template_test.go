package resourceset

import (
	"strings"
	"testing"
)

// The template functions a ResourceSet sees, as the operator documents
// them: slim-sprig's hermetic functions, slugify, toYaml, inputs; the
// delimiters << >>; a missing key is an error.
func TestTemplateFunctions(t *testing.T) {
	inputs := map[string]any{
		"tenant":   "Team One",
		"replicas": int64(3),
		"app":      map[string]any{"version": "6.7.x", "layers": []any{"a", "b"}},
		"provider": map[string]any{"namespace": "apps"},
	}
	for _, tc := range []struct {
		name, text, want, err string
	}{
		{name: "input", text: "<< inputs.tenant >>", want: "Team One"},
		{name: "nested", text: "<< inputs.app.version | quote >>", want: `"6.7.x"`},
		{name: "int", text: "<< inputs.replicas | int >>", want: "3"},
		{name: "slugify", text: "<< inputs.tenant | slugify >>", want: "team-one"},
		{name: "slugify transliterates", text: `<< "Hellö Wörld хелло" | slugify >>`, want: "hello-world-khello"},
		{name: "slugify cuts at a word", text: `<< "aaaaaaaaaa bbbbbbbbbb cccccccccc dddddddddd eeeeeeeeee ffffffffff gggggggggg" | slugify >>`, want: "aaaaaaaaaa-bbbbbbbbbb-cccccccccc-dddddddddd-eeeeeeeeee"},
		{name: "toYaml nindent", text: "x: << inputs.app | toYaml | nindent 2 >>", want: "x: \n  layers:\n  - a\n  - b\n  version: 6.7.x\n  "},
		{name: "get default", text: `<< get inputs "name" | default inputs.provider.namespace >>`, want: "apps"},
		{name: "sprig strings", text: `<< "podinfo" | upper | trunc 3 >>-<< list 1 2 | len >>`, want: "POD-2"},
		{name: "range", text: "<<- range $l := inputs.app.layers >><< $l >><< end >>", want: "ab"},
		{name: "until bounded", text: "<< until 3 | len >>", want: "3"},
		{name: "missing key", text: "<< inputs.nope >>", err: `map has no entry for key "nope"`},
		{name: "no env", text: `<< env "HOME" >>`, err: `function "env" not defined`},
		{name: "no clock", text: `<< now >>`, err: `function "now" not defined`},
		{name: "until too many", text: "<< until 100000000 >>", err: "more than 10000 items"},
		{name: "repeat too many", text: `<< repeat 100000000 "x" >>`, err: "more than 10000"},
		{name: "seq too many", text: `<< seq 1 100000000 >>`, err: "more than 10000 items"},
		{name: "curly braces are text", text: "{{ .Values.x }}", want: "{{ .Values.x }}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := execute(tc.text, inputs, &budget{left: maxOutput})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// What one ResourceSet's templates write is bounded.
func TestTemplateOutputBounded(t *testing.T) {
	b := &budget{left: 100}
	if _, err := execute(`<< repeat 200 "x" >>`, nil, b); err != errTooLarge {
		t.Fatalf("error = %v, want %v", err, errTooLarge)
	}
}

func TestLineOf(t *testing.T) {
	for _, tc := range []struct {
		text string
		line int
		msg  string
	}{
		{"a\nb\n<< bad >>", 3, `function "bad" not defined`},
		{"a\n<< inputs.x >>", 2, `executing "resourceset" at <inputs>: map has no entry for key "x"`},
	} {
		_, err := execute(tc.text, map[string]any{}, &budget{left: maxOutput})
		if err == nil {
			t.Fatalf("%q: no error", tc.text)
		}
		line, msg := lineOf(err)
		if line != tc.line || msg != tc.msg {
			t.Errorf("%q: lineOf = %d, %q; want %d, %q", tc.text, line, msg, tc.line, tc.msg)
		}
	}
}
