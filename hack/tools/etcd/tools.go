//go:build tools

// Package tools pins the etcd server the local test cluster runs.
// It is built from source by `make testenv`.
package tools

import _ "go.etcd.io/etcd/server/v3"
