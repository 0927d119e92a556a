package config

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	yaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// decoder decodes one document, collecting its problems, each named by
// file, object and field.
type decoder struct {
	file string
	line int // where the document starts in the file; node lines count from it
	// flat reports every problem at line: the document is an object a
	// build emitted, whose node lines are not the file's.
	flat   bool
	object string // "Kustomization flux-system/apps", once known
	// version decides which fields are known; set for Kustomizations.
	version version
	// annotations are the string annotations of the object's metadata,
	// and the line of each.
	annotations     map[string]string
	annotationLines map[string]int
	// labels are the string labels of the object's metadata.
	labels map[string]string
	errs   []*Error
}

// add records a problem; line is a node's line within the document (0
// for its start).
func (d *decoder) add(line int, field, msg string) {
	d.errs = append(d.errs, &Error{File: d.file, Line: d.fileLine(line), Object: d.object, Field: field, Msg: msg})
}

// fileLine turns a line within the document into one within the file.
func (d *decoder) fileLine(line int) int {
	if d.flat {
		return d.line
	}
	if line < 1 {
		line = 1
	}
	return d.line + line - 1
}

func (d *decoder) addf(line int, field, format string, args ...any) {
	d.add(line, field, fmt.Sprintf(format, args...))
}

// fields reads one YAML mapping of a document. It remembers which keys
// were asked for, so done can report every other key as unknown: the
// reading code is the schema.
type fields struct {
	d     *decoder
	path  string
	line  int
	keys  []string // in document order
	vals  map[string]*yaml.Node
	lines map[string]int
	used  map[string]bool
}

// resolve follows YAML aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// isNull says whether n is absent or null, which Kubernetes treats alike.
func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// mapping starts reading n, the value at path; nil (reported) when n is
// not a mapping.
func (d *decoder) mapping(path string, n *yaml.Node) *fields {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.add(lineOf(n), path, "must be an object")
		return nil
	}
	f := &fields{d: d, path: path, line: n.Line, vals: map[string]*yaml.Node{}, lines: map[string]int{}, used: map[string]bool{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		key := k.Value
		switch {
		case k.Kind != yaml.ScalarNode:
			d.add(k.Line, path, "keys must be strings")
			continue
		case k.ShortTag() == "!!merge":
			d.add(k.Line, join(path, key), "YAML merge keys are not supported here")
			continue
		case f.vals[key] != nil:
			d.addf(k.Line, join(path, key), "already defined at line %d", f.lines[key])
			continue
		}
		f.keys = append(f.keys, key)
		f.vals[key], f.lines[key] = v, k.Line
	}
	return f
}

func lineOf(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// join makes the path of a field: "spec" + "path" is "spec.path".
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// index makes the path of a list item: "spec.images[0]".
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// keyed makes the path of a map entry: "spec.postBuild.substitute[name]",
// the way Kubernetes names them.
func keyed(path, key string) string { return path + "[" + key + "]" }

// at is the path of key in f.
func (f *fields) at(key string) string { return join(f.path, key) }

// get returns key's value, nil when absent or null, and marks it known.
func (f *fields) get(key string) *yaml.Node {
	f.used[key] = true
	if isNull(f.vals[key]) {
		return nil
	}
	return resolve(f.vals[key])
}

// has says whether key is set (not null), marking it known.
func (f *fields) has(key string) bool { return f.get(key) != nil }

// skip marks key known without reading it.
func (f *fields) skip(key string) { f.used[key] = true }

// missing reports a required field that is absent or empty.
func (f *fields) missing(key string) { f.d.add(f.line, f.at(key), "required") }

// invalid reports a bad value of key.
func (f *fields) invalid(key, format string, args ...any) {
	f.d.addf(f.lines[key], f.at(key), format, args...)
}

// unsupported reports key, if set, as a field kustomize-deploy cannot
// honour, saying why.
func (f *fields) unsupported(key, why string) {
	if f.has(key) {
		f.d.add(f.lines[key], f.at(key), "not supported: "+why)
	}
}

// str returns key's string value; "" when absent.
func (f *fields) str(key string) string {
	n := f.get(key)
	if n == nil {
		return ""
	}
	s, ok := scalarString(n)
	if !ok {
		f.invalid(key, "%s", notString(n))
	}
	return s
}

func scalarString(n *yaml.Node) (string, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return n.Value, true
	}
	return "", false
}

// notString says what is wrong with a value that should be a string.
// It never quotes the value, which may be a Secret's.
func notString(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return "must be a string (quote it)"
	}
	return "must be a string"
}

// boolean returns key's boolean value; false when absent.
func (f *fields) boolean(key string) bool {
	n := f.get(key)
	if n == nil {
		return false
	}
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		f.invalid(key, "must be true or false")
	}
	return b
}

// object starts reading key's value, a mapping; nil when absent or wrong.
func (f *fields) object(key string) *fields {
	n := f.get(key)
	if n == nil {
		return nil
	}
	return f.d.mapping(f.at(key), n)
}

// list returns the items of key's value, a sequence.
func (f *fields) list(key string) []*yaml.Node {
	n := f.get(key)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		f.invalid(key, "must be a list")
		return nil
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		items[i] = resolve(c)
	}
	return items
}

// eachString calls fn with every item of key's value, a list of strings,
// with its index and line; items that are not strings are reported.
func (f *fields) eachString(key string, fn func(i int, s string, line int)) {
	for i, n := range f.list(key) {
		s, ok := scalarString(n)
		if !ok {
			f.d.add(n.Line, index(f.at(key), i), notString(n))
			continue
		}
		fn(i, s, n.Line)
	}
}

// stringMap returns key's value, a mapping of strings to strings, and the
// line of each key; nil when absent. Values are never quoted in problems.
func (f *fields) stringMap(key string) (map[string]string, map[string]int) {
	m := f.object(key)
	if m == nil {
		return nil, nil
	}
	out := make(map[string]string, len(m.keys))
	for _, k := range m.keys {
		m.skip(k)
		n := resolve(m.vals[k])
		if isNull(n) {
			out[k] = ""
			continue
		}
		s, ok := scalarString(n)
		if !ok {
			f.d.add(n.Line, keyed(m.path, k), notString(n))
			continue
		}
		out[k] = s
	}
	return out, m.lines
}

// duration returns key's value, a Go duration, and the text it was
// written as; pattern, when set, is the syntax the API version's CRD
// enforces. ok is false when key is absent or wrong.
func (f *fields) duration(key string, pattern *regexp.Regexp) (d time.Duration, text string, ok bool) {
	const want = "a duration such as 30s, 5m or 1h30m"
	if n := f.get(key); n != nil {
		if s, ok := scalarString(n); ok {
			text = s
		} else {
			f.invalid(key, "must be %s, as a string", want)
			return 0, "", false
		}
	}
	if text == "" {
		return 0, "", false
	}
	d, err := time.ParseDuration(text)
	if err != nil || pattern != nil && !pattern.MatchString(text) {
		f.invalid(key, "%q is not %s", text, want)
		return 0, text, false
	}
	return d, text, true
}

// oneOf checks that key's value, if set, is one of allowed.
func (f *fields) oneOf(key string, allowed ...string) string {
	s := f.str(key)
	if s != "" && !slices.Contains(allowed, s) {
		f.invalid(key, "%q is not one of %s", s, orList(allowed))
	}
	return s
}

// done reports the keys nobody asked for as unknown fields.
func (f *fields) done() {
	for _, k := range f.keys {
		if f.used[k] {
			continue
		}
		msg := "unknown field"
		if hint := f.d.hint(f.at(k)); hint != "" {
			msg += " " + hint
		}
		f.d.add(f.lines[k], f.at(k), msg)
	}
}
