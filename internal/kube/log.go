package kube

import (
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// controller-runtime (under fluxcd/pkg/ssa) prints a stack trace to stderr
// the first time it logs without a logger set, and client-go logs through
// klog to stderr ("Unexpected error when reading response body" while an
// API server restarts, throttling notes). Nothing they log is for our
// users: results and errors are returned as values and reported once,
// masked. So neither gets an output.
func init() {
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
}
