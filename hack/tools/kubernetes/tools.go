//go:build tools

// Package tools pins the Kubernetes control-plane binaries the local test
// cluster runs. They are built from source by `make testenv`.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
