//go:build tools

// Package tools pins goreleaser, which builds the release's archives,
// raw binaries and checksums.txt from .goreleaser.yaml (make dist,
// make release-check, .github/workflows/release.yml), built from source
// so no machine needs it installed. v2.15.1 is the newest release that
// builds with the Go toolchain of go.mod.
package tools

import _ "github.com/goreleaser/goreleaser/v2"
