package helm

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/Masterminds/sprig/v3"
)

// The bounded functions are sprig's: within the budget they return what
// sprig's return, and the size they charge is the size sprig makes, for
// every sign of start, stop and step.
func TestBoundedFuncsAreSprigs(t *testing.T) {
	t.Parallel()
	sp := sprig.TxtFuncMap()
	ints := []int{-7, -3, -1, 0, 1, 2, 3, 8}
	type call struct {
		fn   string
		args []any
	}
	var calls []call
	for _, a := range ints {
		calls = append(calls, call{"until", []any{a}}, call{"seq", []any{a}}, call{"repeat", []any{max(a, 0), "ab"}}, call{"randNumeric", []any{max(a, 0)}})
		for _, b := range ints {
			calls = append(calls, call{"seq", []any{a, b}})
			for _, c := range ints {
				calls = append(calls, call{"untilStep", []any{a, b, c}}, call{"seq", []any{a, b, c}})
			}
		}
	}
	calls = append(calls, call{"seq", nil}, call{"seq", []any{1, 2, 3, 4}})
	for _, c := range calls {
		b := &budget{ctx: context.Background()}
		want := invoke(t, sp[c.fn], c.args)
		got := invoke(t, b.funcs()[c.fn], c.args)
		if err, _ := got[len(got)-1].(error); err != nil {
			t.Fatalf("%s%v: %v", c.fn, c.args, err)
		}
		if c.fn == "randNumeric" {
			if len(got[0].(string)) != len(want[0].(string)) || b.bytes != len(want[0].(string)) {
				t.Errorf("%s%v: %q, charged %d bytes, sprig %q", c.fn, c.args, got[0], b.bytes, want[0])
			}
			continue
		}
		if !reflect.DeepEqual(got[0], want[0]) {
			t.Errorf("%s%v = %v, sprig's %v", c.fn, c.args, got[0], want[0])
		}
		var size int
		switch w := want[0].(type) {
		case []int:
			size = len(w)
		case string:
			if c.fn == "seq" {
				size = len(strings.Fields(w))
			} else {
				size = len(w)
			}
		}
		if charged := b.sequence + b.bytes; charged != size {
			t.Errorf("%s%v: charged %d, sprig made %d", c.fn, c.args, charged, size)
		}
	}
}

// Once the render's context ends, every bounded function refuses.
func TestBoundedFuncsStopWithTheRender(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	b := &budget{ctx: ctx}
	if out := invoke(t, b.funcs()["until"], []any{3}); out[1] != nil {
		t.Fatalf("until 3: %v", out[1])
	}
	cancel()
	out := invoke(t, b.funcs()["bcrypt"], []any{"x"})
	if err, _ := out[1].(error); err == nil || !strings.Contains(err.Error(), "bcrypt: rendering stopped: context canceled") {
		t.Errorf("bcrypt after the render stopped: %v", out[1])
	}
}

func invoke(t *testing.T, fn any, args []any) []any {
	t.Helper()
	v := reflect.ValueOf(fn)
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		in[i] = reflect.ValueOf(a)
	}
	var out []any
	for _, r := range v.Call(in) {
		out = append(out, r.Interface())
	}
	return out
}
