package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	t.Parallel()
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/kustomize-deploy/kustomize-deploy", Version: "v1.2.3"}}
	checkout := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abc"}}}
	for name, tc := range map[string]struct {
		version, commit string
		bi              *debug.BuildInfo
		want            [2]string
	}{
		"go install @v1.2.3":       {"dev", "unknown", installed, [2]string{"v1.2.3", "unknown"}},
		"go build in a checkout":   {"dev", "unknown", checkout, [2]string{"dev", "0123abc"}},
		"make build: ldflags win":  {"v9.9.9", "feed", installed, [2]string{"v9.9.9", "feed"}},
		"ldflags win over the VCS": {"v9.9.9", "feed", checkout, [2]string{"v9.9.9", "feed"}},
		"no build information":     {"dev", "unknown", nil, [2]string{"dev", "unknown"}},
	} {
		t.Run(name, func(t *testing.T) {
			v, c := fromBuildInfo(tc.version, tc.commit, tc.bi)
			if got := [2]string{v, c}; got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
