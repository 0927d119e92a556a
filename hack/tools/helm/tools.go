//go:build tools

// Package tools pins helm, the peer `make bench` measures kustomize-deploy's
// in-process Helm rendering and deploys against (helm template, helm
// upgrade --install). It is built from source by cmd/bench, from the same
// Helm module kustomize-deploy links.
package tools

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
