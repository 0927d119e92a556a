//go:build tools

// Package tools pins kustomize, the peer `make bench` measures
// `build --config` against (kustomize build of each unit, beside helm
// template of each chart). It is built from source by cmd/bench, on the
// same kustomize/api version kustomize-deploy links.
package tools

import (
	_ "sigs.k8s.io/kustomize/kustomize/v5"
)
