package helm

import (
	"strings"
	"testing"
	texttemplate "text/template"
)

// guardTpl rewrites only tpl calls: each template, rewritten, renders as
// it did, whatever syntax surrounds the call (text/template's own
// printing of a parsed template is what the rewrite emits).
func TestGuardTplRendersTheSame(t *testing.T) {
	t.Parallel()
	data := map[string]any{"a": map[string]any{"b": "x", "n": 3}, "list": []any{"p", "q", "r"}, "t": "{{ .a.b }}!", "empty": ""}
	for name, text := range map[string]string{
		"plain call":          `{{ tpl .t . }}`,
		"trim markers":        "a  \n  {{- tpl .t . -}}  \n  b",
		"pipeline":            `{{ tpl .t . | printf "%q" }}`,
		"context piped":       `{{ . | tpl .t }}`,
		"parenthesized":       `{{ tpl (printf "%s" .t) . }}`,
		"else if chain":       `{{ if .empty }}e{{ else if .a.n }}{{ tpl .t . }}{{ else }}z{{ end }}`,
		"with else with":      `{{ with .empty }}e{{ else with .a }}{{ tpl "{{ .b }}" . }}{{ end }}`,
		"range break":         `{{ range $i, $v := .list }}{{ if eq $i 2 }}{{ break }}{{ end }}{{ tpl "[{{ . }}]" $v }}{{ end }}`,
		"range continue else": `{{ range .list }}{{ if eq . "q" }}{{ continue }}{{ end }}{{ tpl "{{ . }}" . }}{{ else }}none{{ end }}`,
		"assignment":          `{{ $x := "" }}{{ $x = tpl .t . }}{{ $x }}`,
		"chain":               `{{ tpl (.a).b . }}`,
		"raw strings":         "{{ tpl `{{ .a.b }}` . }}{{ `raw` }}",
		"comments":            `{{/* a comment */}}{{ tpl .t . }}{{- /* another */ -}}`,
		"numbers and chars":   `{{ tpl .t . }}{{ 0x1F }} {{ 1e3 }} {{ 'a' }} {{ printf "%v" nil }} {{ true }}`,
		"and or not":          `{{ if and .a (or .empty (not .empty)) }}{{ tpl .t . }}{{ end }}`,
		"defines":             `{{ define "d" }}{{ tpl .t . }}{{ end }}{{ define "e" }}e{{ end }}{{ template "d" . }}{{ template "e" }}`,
		"block":               `{{ block "b" . }}{{ tpl .t . }}{{ end }}`,
		"nested tpl":          `{{ tpl "{{ tpl .t . }}" . }}`,
		"tpl of a variable":   `{{ $v := .t }}{{ tpl $v $ }}`,
		"field named tpl":     `{{ .a.b }}{{ tpl .t . }}`,
	} {
		t.Run(name, func(t *testing.T) {
			guarded := guardTpl(text)
			if guarded == text || !strings.Contains(guarded, tplGuardFunc) {
				t.Fatalf("not rewritten: %q", guarded)
			}
			want, got := execute(t, text, data), execute(t, guarded, data)
			if want != got {
				t.Errorf("rendered %q, guarded %q (as %q)", want, got, guarded)
			}
		})
	}
	for _, text := range []string{"no template", "{{ .tplvalues }}", `{{ include "x.tpl" . }}`, "{{ broken"} {
		if got := guardTpl(text); got != text {
			t.Errorf("%q rewritten to %q", text, got)
		}
	}
}

// execute executes text with a tpl as Helm's (the text run on a clone,
// with the same functions) and the guard as identity.
func execute(t *testing.T, text string, data any) string {
	t.Helper()
	var root *texttemplate.Template
	funcs := texttemplate.FuncMap{
		tplGuardFunc: func(s string) string { return s },
		"tpl": func(s string, v any) (string, error) {
			c, err := root.Clone()
			if err != nil {
				return "", err
			}
			c, err = c.New("tpl").Parse(s)
			if err != nil {
				return "", err
			}
			var b strings.Builder
			err = c.Execute(&b, v)
			return b.String(), err
		},
	}
	root = texttemplate.Must(texttemplate.New("root").Funcs(funcs).Parse(text))
	var b strings.Builder
	if err := root.Execute(&b, data); err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	return b.String()
}
