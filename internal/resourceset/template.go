package resourceset

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"text/template"

	ssautil "github.com/fluxcd/pkg/ssa/utils"
	sprig "github.com/go-task/slim-sprig/v3"
	"github.com/gosimple/slug"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The operator executes a ResourceSet's templates with Go's text/template,
// the delimiters << and >> (so that a ResourceSet fits in a Helm chart),
// missingkey=error, and these functions: slim-sprig's hermetic set (no
// env, no clock, no randomness, no network), slugify (gosimple/slug with
// at most 63 characters, cut at a word boundary: a valid label value),
// toYaml and mustToYaml, and inputs, the input set. The same here, with
// bounds a pull request cannot exhaust a runner past: the functions that
// build a list or a string of a size given as a number (until, untilStep,
// seq, repeat) refuse more than maxItems items, and what one ResourceSet's
// templates write is bounded by maxOutput.

const (
	// maxItems bounds the lists and repeats a template may build: as
	// many as the operator allows input sets (its maxPermutations).
	maxItems = 10000
	// maxOutput bounds what one ResourceSet's templates write, all
	// input sets together.
	maxOutput = 32 << 20
	// maxObjects bounds the objects one ResourceSet generates.
	maxObjects = 10000
)

// slugMaxLength is the operator's: a label value's maximum.
const slugMaxLength = 63

// slugify is the operator's slugify: gosimple/slug's Make with at most
// 63 characters, cut at the last "-" within them (its smart truncation,
// done here rather than through the package's global settings).
func slugify(s string) string {
	sl := slug.Make(s)
	if len(sl) <= slugMaxLength {
		return sl
	}
	for i := slugMaxLength; i >= 0; i-- {
		if sl[i] == '-' {
			return sl[:i]
		}
	}
	return sl[:slugMaxLength]
}

// toYaml is the operator's toYaml: the YAML of v, or "" when it has none.
func toYaml(v any) string {
	s, err := mustToYaml(v)
	if err != nil {
		return ""
	}
	return s
}

func mustToYaml(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// funcs are the functions templates see, inputs aside.
func funcs() template.FuncMap {
	f := sprig.HermeticTxtFuncMap()
	f["slugify"] = slugify
	f["toYaml"] = toYaml
	f["mustToYaml"] = mustToYaml
	f["repeat"] = func(count int, s string) (string, error) {
		if count > maxItems || count*len(s) > maxOutput {
			return "", fmt.Errorf("repeat %d: more than %d", count, maxItems)
		}
		return strings.Repeat(s, max(count, 0)), nil
	}
	until, untilStep, seq := f["until"].(func(int) []int), f["untilStep"].(func(int, int, int) []int), f["seq"].(func(...int) string)
	f["until"] = func(n int) ([]int, error) {
		if n > maxItems || n < -maxItems {
			return nil, fmt.Errorf("until %d: more than %d items", n, maxItems)
		}
		return until(n), nil
	}
	f["untilStep"] = func(start, stop, step int) ([]int, error) {
		if step != 0 && (stop-start)/step > maxItems {
			return nil, fmt.Errorf("untilStep %d %d %d: more than %d items", start, stop, step, maxItems)
		}
		return untilStep(start, stop, step), nil
	}
	f["seq"] = func(params ...int) (string, error) {
		if n := seqLength(params); n > maxItems {
			return "", fmt.Errorf("seq: more than %d items", maxItems)
		}
		return seq(params...), nil
	}
	return f
}

// seqLength is how many numbers seq would print for params (as sprig
// reads them: end; start end; start step end).
func seqLength(params []int) int {
	abs := func(n int) int { return max(n, -n) }
	switch len(params) {
	case 1:
		return abs(params[0])
	case 2:
		return abs(params[1] - params[0])
	case 3:
		if params[1] == 0 {
			return 0
		}
		return abs((params[2] - params[0]) / params[1])
	}
	return 0
}

// baseFuncs are funcs, made once: they hold no state.
var baseFuncs = sync.OnceValue(funcs)

// tmpl is one of a ResourceSet's templates, parsed once and executed
// once per input set.
type tmpl struct {
	t *template.Template
	// inputs is what the inputs function returns while it executes.
	inputs map[string]any
}

// parse parses text as one of a ResourceSet's templates.
func parse(text string) (*tmpl, error) {
	p := &tmpl{}
	t, err := template.New("resourceset").
		Delims("<<", ">>").
		Funcs(baseFuncs()).
		Funcs(template.FuncMap{"inputs": func() any { return p.inputs }}).
		Option("missingkey=error").
		Parse(text)
	p.t = t
	return p, err
}

// parseResource parses one of spec.resources, given as JSON, as the
// operator reads it: turned into YAML, then parsed.
func parseResource(raw []byte) (*tmpl, error) {
	text, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil, err
	}
	return parse(string(text))
}

// budget is what the templates of one ResourceSet may still write.
type budget struct{ left int }

// limitedWriter fails once its budget is spent.
type limitedWriter struct {
	buf bytes.Buffer
	b   *budget
}

var errTooLarge = fmt.Errorf("the templates write more than %d MiB", maxOutput>>20)

func (w *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > w.b.left {
		return 0, errTooLarge
	}
	w.b.left -= len(p)
	return w.buf.Write(p)
}

// execute runs the template with inputs and returns what it wrote.
func (p *tmpl) execute(inputs map[string]any, b *budget) (string, error) {
	p.inputs = inputs
	w := &limitedWriter{b: b}
	if err := p.t.Execute(w, nil); err != nil {
		if errors.Is(err, errTooLarge) {
			return "", errTooLarge
		}
		return "", err
	}
	return w.buf.String(), nil
}

// execute parses text and runs it with inputs.
func execute(text string, inputs map[string]any, b *budget) (string, error) {
	p, err := parse(text)
	if err != nil {
		return "", err
	}
	return p.execute(inputs, b)
}

// object runs one of spec.resources and reads the one object it writes.
func (p *tmpl) object(inputs map[string]any, b *budget) (*unstructured.Unstructured, error) {
	out, err := p.execute(inputs, b)
	if err != nil {
		return nil, err
	}
	u, err := ssautil.ReadObject(strings.NewReader(out))
	if err != nil {
		return nil, &outputError{Output: out, Err: err}
	}
	return u, nil
}

// objects runs spec.resourcesTemplate and reads the objects of the YAML
// stream it writes.
func (p *tmpl) objects(inputs map[string]any, b *budget) ([]*unstructured.Unstructured, error) {
	out, err := p.execute(inputs, b)
	if err != nil {
		return nil, err
	}
	objs, err := ssautil.ReadObjects(strings.NewReader(out))
	if err != nil {
		return nil, &outputError{Output: out, Err: err}
	}
	return objs, nil
}

// outputError is a template's output that does not read as objects.
type outputError struct {
	Output string
	Err    error
}

func (e *outputError) Error() string {
	return "what it writes does not read as Kubernetes objects: " + e.Err.Error()
}
func (e *outputError) Unwrap() error { return e.Err }

// templateLine matches text/template's errors: "template: NAME:LINE:COL:
// message" (executing) or "template: NAME:LINE: message" (parsing).
var templateLine = regexp.MustCompile(`^template: [^:]*:(\d+):(?:\d+:)? ?(.*)$`)

// lineOf splits a text/template error into the template's line it names
// (0: none) and the rest of its message.
func lineOf(err error) (int, string) {
	m := templateLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, err.Error()
	}
	n, _ := strconv.Atoi(m[1])
	return n, m[2]
}
