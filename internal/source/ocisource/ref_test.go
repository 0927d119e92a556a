package ocisource

import (
	"strings"
	"testing"
)

func TestPickTag(t *testing.T) {
	tags := []string{"latest", "1.0.0", "v1.2.0", "1.3.0-rc.1", "1.3.0-dev.1", "2.0.0", "1.2", "1.1.0_build.5"}
	for _, tc := range []struct {
		name      string
		ref       Ref
		mediaType string
		want      string
		err       string
	}{
		{"highest in range", Ref{SemVer: ">=1.0.0 <2.0.0"}, "", "v1.2.0", ""},
		{"any", Ref{SemVer: "*"}, "", "2.0.0", ""},
		{"prereleases when asked", Ref{SemVer: ">=1.3.0-0 <2.0.0"}, "", "1.3.0-rc.1", ""},
		{"filtered", Ref{SemVer: ">=1.3.0-0 <2.0.0", SemVerFilter: "-dev"}, "", "1.3.0-dev.1", ""},
		{"not strict semver: never", Ref{SemVer: "1.2.x"}, "", "v1.2.0", ""},
		{"a chart's _ is +", Ref{SemVer: "~1.1.0"}, ChartMediaType, "1.1.0_build.5", ""},
		{"elsewhere _ is no version", Ref{SemVer: "~1.1.0"}, "", "", `no tag matches semver range "~1.1.0" (8 tags: 2.0.0, 1.3.0-rc.1, 1.3.0-dev.1, v1.2.0, 1.0.0)`},
		{"none", Ref{SemVer: ">=3"}, "", "", "no tag matches"},
	} {
		got, err := pickTag(tc.ref, tags, tc.mediaType)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q, %v; want an error saying %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
