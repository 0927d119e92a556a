package paths

import "testing"

func TestWithin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		root, p, rel string
		ok           bool
	}{
		{"/repo", "/repo", ".", true},
		{"/repo", "/repo/apps/web.yaml", "apps/web.yaml", true},
		{"/repo/", "/repo/apps/../x", "x", true},
		{"/repo", "/repo/../etc/passwd", "", false},
		{"/repo", "/repository/x", "", false},
		{"/repo", "/", "", false},
		{"/repo", "/repo/..file", "..file", true},
	} {
		rel, ok := Within(tc.root, tc.p)
		if rel != tc.rel || ok != tc.ok {
			t.Errorf("Within(%q, %q) = %q, %v; want %q, %v", tc.root, tc.p, rel, ok, tc.rel, tc.ok)
		}
	}
}
