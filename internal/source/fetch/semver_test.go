package fetch

import "testing"

func TestHighestTag(t *testing.T) {
	tags := []string{"v1.0.0", "v1.2.0", "1.3.0-rc.1", "v2.0.0", "latest", "v1.2", "1.2.9"}
	for _, tc := range []struct {
		rng, want string
		ok        bool
	}{
		{">=1.0.0 <2.0.0", "1.2.9", true},
		{"~1.2", "1.2.9", true},
		{"*", "v2.0.0", true},
		{">=1.3.0-0 <2.0.0", "1.3.0-rc.1", true}, // a prerelease only when the range asks
		{">=3.0.0", "", false},
		{"1.2.x", "1.2.9", true}, // "v1.2" is not strict semver: never a version
	} {
		got, ok, err := HighestTag(tc.rng, tags)
		if err != nil || ok != tc.ok || got != tc.want {
			t.Errorf("HighestTag(%q) = %q, %v, %v; want %q, %v", tc.rng, got, ok, err, tc.want, tc.ok)
		}
	}
	// Versions equal but for build metadata: the greatest name.
	if got, _, _ := HighestTag("1.0.0", []string{"1.0.0+b", "1.0.0+a"}); got != "1.0.0+b" {
		t.Errorf("tie: got %q", got)
	}
	if _, _, err := HighestTag("not a range", tags); err == nil {
		t.Error("a bad range was taken")
	}
}
