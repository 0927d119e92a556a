//go:build tools

// Package tools pins the Kubernetes control-plane binaries the local test
// cluster runs, and kubectl, which `make bench` measures as a peer. They are
// built from source by `make testenv` (kubectl by `make bench`).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
