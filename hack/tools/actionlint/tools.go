//go:build tools

// Package tools pins actionlint, which checks every workflow (CI, release,
// examples) in `make test` (internal/release), built from source like the
// control plane, so no machine needs it installed.
package tools

import _ "github.com/rhysd/actionlint/cmd/actionlint"
