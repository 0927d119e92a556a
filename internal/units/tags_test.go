package units

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
)

func TestSelectTags(t *testing.T) {
	t.Parallel()
	set := &config.Set{Units: []*config.Unit{
		{Name: "a", Tags: []string{"backend"}},
		{Name: "b", Tags: []string{"frontend"}},
		{Name: "c", Tags: []string{"backend", "slow"}},
		{Name: "d"},
	}}
	for _, tc := range []struct {
		only, include, exclude []string
		want                   []string
		err                    string
	}{
		{nil, nil, nil, nil, ""}, // no tags: Only as it was (all)
		{[]string{"a", "b"}, nil, nil, []string{"a", "b"}, ""},
		{nil, []string{"backend"}, nil, []string{"a", "c"}, ""},
		{nil, []string{"backend"}, []string{"slow"}, []string{"a"}, ""},
		{nil, nil, []string{"backend"}, []string{"b", "d"}, ""},
		{[]string{"b", "c"}, []string{"backend"}, nil, []string{"c"}, ""},
		{[]string{"b"}, []string{"backend"}, nil, nil, "no unit of the configuration is selected including tags backend (of 1: b)"},
		{nil, []string{"two words"}, nil, nil, `tag "two words"`},
	} {
		got, err := selectTags(set, tc.only, tc.include, tc.exclude, io.Discard)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("only %q include %q exclude %q: error %v, want %q", tc.only, tc.include, tc.exclude, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("only %q include %q exclude %q: %q, %v; want %q", tc.only, tc.include, tc.exclude, got, err, tc.want)
		}
	}
}
