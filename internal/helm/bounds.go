package helm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/Masterminds/sprig/v3"
)

// A pull request's chart is hostile input, and a few of the template
// functions Helm takes from sprig turn one short line into unbounded
// work: `until 1000000000` allocates a billion-element slice before the
// template has written a byte, `repeat` and the rand* functions a string
// of any length, and every key or certificate generated (or bcrypt hash)
// costs tens to hundreds of milliseconds of CPU, in a loop as often as
// the loop runs. The render's size check (MaxRenderedBytes) comes after
// the engine returns, too late for all of them. So those functions are
// replaced, for each release's render, by the same sprig functions
// behind a budget: what they would make is counted before they make it,
// and the render fails naming the function once the release asks for
// more than a chart needs, or once its context ends. A template that
// loops over values without calling any of them (a range nested in a
// range) is bounded by its values' size only.
const (
	// MaxSequence bounds the elements until, untilStep and seq make in
	// one release's render, together.
	MaxSequence = 1_000_000
	// MaxGeneratedBytes bounds the bytes repeat and the rand* functions
	// make in one release's render, together: what it may render.
	MaxGeneratedBytes = MaxRenderedBytes
	// MaxCostlyCalls bounds the keys, certificates and password hashes
	// one release's render may make (genPrivateKey, genCA, bcrypt, …).
	MaxCostlyCalls = 100
)

// errBudget is the budget's refusal.
var errBudget = errors.New("template function budget")

// budget is one render's count of what the bounded functions made
// (renders of one release run on one goroutine).
type budget struct {
	ctx      context.Context
	sequence int
	bytes    int
	costly   int
	// err is the budget's refusal, once it refused.
	err error
}

// costly are the sprig functions that generate a key or hash a
// password: each call costs CPU whatever its arguments.
var costly = []string{"genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey",
	"genSignedCert", "genSignedCertWithKey", "bcrypt", "htpasswd", "derivePassword"}

// sized are the sprig functions whose result's size their arguments
// say, and what each would make: elements of a sequence, or bytes.
var sized = map[string]func(args []int) (elements, bytes int){
	"until": func(a []int) (int, int) { return steps(0, a[0], sign(a[0])), 0 },
	"untilStep": func(a []int) (int, int) {
		return steps(a[0], a[1], a[2]), 0
	},
	"seq":          func(a []int) (int, int) { return seqLen(a), 0 },
	"randAlphaNum": func(a []int) (int, int) { return 0, a[0] },
	"randAlpha":    func(a []int) (int, int) { return 0, a[0] },
	"randAscii":    func(a []int) (int, int) { return 0, a[0] },
	"randNumeric":  func(a []int) (int, int) { return 0, a[0] },
	"randBytes":    func(a []int) (int, int) { return 0, a[0] },
}

// funcs returns sprig's functions of sized and costly, and
// repeat, each checking b before it runs.
func (b *budget) funcs() map[string]any {
	sp := sprig.TxtFuncMap()
	out := map[string]any{}
	for name, size := range sized {
		out[name] = b.wrap(name, sp[name], func(args []reflect.Value) error {
			ints := make([]int, len(args))
			for i, a := range args {
				ints[i] = int(a.Int())
			}
			elements, bytes := size(ints)
			return b.charge(name, elements, bytes, 0)
		})
	}
	out["repeat"] = b.wrap("repeat", sp["repeat"], func(args []reflect.Value) error {
		count, s := int(args[0].Int()), args[1].String()
		n := 0
		if count > 0 && len(s) > 0 {
			n = count * len(s)
			if n/len(s) != count { // overflows
				n = MaxGeneratedBytes + 1
			}
		}
		return b.charge("repeat", 0, n, 0)
	})
	for _, name := range costly {
		out[name] = b.wrap(name, sp[name], func([]reflect.Value) error { return b.charge(name, 0, 0, 1) })
	}
	return out
}

// charge counts what a call of fn would make, and refuses it over the
// budget or once the render's context ended.
func (b *budget) charge(fn string, elements, bytes, calls int) error {
	if b.err != nil {
		return b.err
	}
	if err := b.ctx.Err(); err != nil {
		b.err = fmt.Errorf("%w: %s: rendering stopped: %w", errBudget, fn, context.Cause(b.ctx))
		return b.err
	}
	switch {
	case elements > MaxSequence || b.sequence+elements > MaxSequence:
		b.err = fmt.Errorf("%w: %s would make a sequence of %d elements, and the release's render may make %d in all", errBudget, fn, elements, MaxSequence)
	case bytes > MaxGeneratedBytes || b.bytes+bytes > MaxGeneratedBytes:
		b.err = fmt.Errorf("%w: %s would make %d bytes, and the release's render may make %d MiB in all", errBudget, fn, bytes, MaxGeneratedBytes>>20)
	case b.costly+calls > MaxCostlyCalls:
		b.err = fmt.Errorf("%w: %s was called more than %d times (each generates a key or hashes a password)", errBudget, fn, MaxCostlyCalls)
	}
	b.sequence, b.bytes, b.costly = b.sequence+max(elements, 0), b.bytes+max(bytes, 0), b.costly+calls
	return b.err
}

// wrap returns fn with the same parameters, calling check on its
// arguments first: fn's results, plus an error when fn has none.
func (b *budget) wrap(name string, fn any, check func(args []reflect.Value) error) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	errType := reflect.TypeFor[error]()
	in := make([]reflect.Type, t.NumIn())
	for i := range in {
		in[i] = t.In(i)
	}
	out := make([]reflect.Type, t.NumOut())
	for i := range out {
		out[i] = t.Out(i)
	}
	hasErr := len(out) == 2 && out[1] == errType
	if !hasErr {
		out = append(out, errType)
	}
	ft := reflect.FuncOf(in, out, t.IsVariadic())
	return reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
		checked := args
		if t.IsVariadic() { // seq: its ints one by one
			last := args[len(args)-1]
			checked = append([]reflect.Value{}, args[:len(args)-1]...)
			for i := range last.Len() {
				checked = append(checked, last.Index(i))
			}
		}
		if name == "seq" && len(checked) != 1 && len(checked) != 2 && len(checked) != 3 {
			checked = nil // makes nothing, as sprig's
		}
		if err := check(checked); err != nil {
			res := make([]reflect.Value, len(out))
			for i := range out[:len(out)-1] {
				res[i] = reflect.Zero(out[i])
			}
			res[len(res)-1] = reflect.ValueOf(&err).Elem()
			return res
		}
		var res []reflect.Value
		if t.IsVariadic() {
			res = v.CallSlice(args)
		} else {
			res = v.Call(args)
		}
		if !hasErr {
			res = append(res, reflect.Zero(errType))
		}
		return res
	}).Interface()
}

// steps is how many elements sprig's untilStep(start, stop, step)
// makes, math.MaxInt when more.
func steps(start, stop, step int) int {
	var span, by uint64 // in uint64, as the span of two ints may not fit an int
	switch {
	case stop < start && step < 0:
		span, by = uint64(start)-uint64(stop), uint64(-(step+1))+1
	case stop > start && step > 0:
		span, by = uint64(stop)-uint64(start), uint64(step)
	default:
		return 0
	}
	n := span / by
	if span%by != 0 {
		n++
	}
	return int(min(n, math.MaxInt))
}

func sign(n int) int {
	if n < 0 {
		return -1
	}
	return 1
}

// seqLen is how many numbers sprig's seq makes of its parameters: its
// own arithmetic, which wraps as Go's ints do.
func seqLen(p []int) int {
	switch len(p) {
	case 1:
		start, end, inc := 1, p[0], 1
		if end < start {
			inc = -1
		}
		return steps(start, end+inc, inc)
	case 2:
		start, end, inc := p[0], p[1], 1
		if end < start {
			inc = -1
		}
		return steps(start, end+inc, inc)
	case 3:
		start, step, end, inc := p[0], p[1], p[2], 1
		if end < start {
			inc = -1
			if step > 0 {
				return 0
			}
		}
		return steps(start, end+inc, step)
	}
	return 0
}
