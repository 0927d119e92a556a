package config

import (
	"strings"
	"testing"
)

// A pathPattern reads as source-watcher's: @alias/pattern, each {name}
// one path segment, named once; anything else is refused saying why.
func TestParsePathPattern(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text  string
		dir   string
		match map[string]string
		err   string
	}{
		{text: "@mono/apps/{app}/envs/{env}", dir: "apps/Web/envs/prod", match: map[string]string{"app": "Web", "env": "prod"}},
		{text: "@mono/apps/{app}/envs/{env}", dir: "apps/web/x/envs/prod"},
		{text: "@mono/apps/{app}", dir: "apps"},
		{text: "@mono/apps.d/{app}", dir: "appsXd/web"},
		{text: "@mono/apps/{app}-svc", dir: "apps/web-svc", match: map[string]string{"app": "web"}},
		{text: "mono/apps/{app}", err: "is not @alias/pattern"},
		{text: "@mono", err: "is not @alias/pattern"},
		{text: "@mono/apps/{app", err: "has no closing brace"},
		{text: "@mono/apps/app}", err: "closes no capture"},
		{text: "@mono/apps/{1app}", err: "is not a name"},
		{text: "@mono/{app}/{app}", err: "is named twice"},
	} {
		p, err := ParsePathPattern(tc.text)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.text, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		got := p.Match(tc.dir)
		if len(got) != len(tc.match) || (tc.match == nil) != (got == nil) {
			t.Errorf("%s on %s: %v, want %v", tc.text, tc.dir, got, tc.match)
		}
		for k, v := range tc.match {
			if got[k] != v {
				t.Errorf("%s on %s: %s=%q, want %q", tc.text, tc.dir, k, got[k], v)
			}
		}
	}
}
