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

// Get returns the build description. When Commit was not set at link time it
// falls back to the VCS revision the Go toolchain stamped, if any.
func Get() Info {
	commit := Commit
	if commit == "unknown" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					commit = s.Value
				}
			}
		}
	}
	return Info{
		Version:   Version,
		Commit:    commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

func (i Info) String() string {
	return fmt.Sprintf("kustomize-deploy %s (commit %s, %s, %s)", i.Version, i.Commit, i.GoVersion, i.Platform)
}
