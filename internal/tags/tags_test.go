package tags

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"backend":                 {"backend"},
		" backend, critical ,,":   {"backend", "critical"},
		"a.b_c-d,backend,backend": {"a.b_c-d", "backend"},
		"":                        nil,
	} {
		got, err := Parse(in)
		if err != nil || !cmp.Equal(want, got) {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"two words", "-dash", "ünï"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "want letters") {
			t.Errorf("Parse(%q): %v, want an error", bad, err)
		}
	}
}

// kluctl's rule: an excluded tag wins; with include tags, one must match.
func TestSelects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tags, include, exclude []string
		want                   bool
	}{
		{nil, nil, nil, true},
		{[]string{"backend"}, nil, nil, true},
		{nil, []string{"backend"}, nil, false},
		{[]string{"backend", "slow"}, []string{"backend"}, nil, true},
		{[]string{"backend", "slow"}, []string{"backend"}, []string{"slow"}, false},
		{[]string{"frontend"}, nil, []string{"slow"}, true},
		{[]string{"frontend"}, []string{"backend", "frontend"}, nil, true},
	} {
		if got := Selects(tc.tags, tc.include, tc.exclude); got != tc.want {
			t.Errorf("Selects(%q, include %q, exclude %q) = %v, want %v", tc.tags, tc.include, tc.exclude, got, tc.want)
		}
	}
}
