//go:build tools

// Package tools pins kapp, one of the peers `make bench` measures
// kustomize-deploy against. It is built from source by cmd/bench.
package tools

import (
	_ "carvel.dev/kapp/cmd/kapp"
)
