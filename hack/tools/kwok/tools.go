//go:build tools

// Package tools pins kwok, which gives the local test cluster fake nodes
// whose pods move through Pending, Running and Ready.
// It is built from source by `make testenv`.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
