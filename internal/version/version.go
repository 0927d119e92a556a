// Package version reports which build of kustomize-deploy is running.
// The Makefile sets Version and Commit with -ldflags "-X ...".
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time by the Makefile; the defaults describe a plain `go build`.
var (
	Version = "dev"
	Commit  = "unknown"
)

// Info is the build description printed by `kustomize-deploy version`.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build description. What was not set at link time comes
// from what the Go toolchain stamped, if anything: the module version for
// `go install .../cmd/kustomize-deploy@v1.2.3`, the VCS revision for a
// build in a checkout.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	version, commit := fromBuildInfo(Version, Commit, bi)
	return Info{
		Version:   version,
		Commit:    commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// fromBuildInfo fills the defaults "dev" and "unknown" from bi (nil when
// the binary has no build information).
func fromBuildInfo(version, commit string, bi *debug.BuildInfo) (string, string) {
	if bi == nil {
		return version, commit
	}
	if version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
	if commit == "unknown" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				commit = s.Value
			}
		}
	}
	return version, commit
}

func (i Info) String() string {
	return fmt.Sprintf("kustomize-deploy %s (commit %s, %s, %s)", i.Version, i.Commit, i.GoVersion, i.Platform)
}
