package kube

import (
	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// controller-runtime (under fluxcd/pkg/ssa) prints a stack trace to stderr
// the first time it logs without a logger set. Nothing it logs is for our
// users (results and errors are returned as values), so it gets none.
func init() { ctrllog.SetLogger(logr.Discard()) }
