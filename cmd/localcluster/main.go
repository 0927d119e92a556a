// Command localcluster runs the project's local Kubernetes control plane
// (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok fake
// nodes) until interrupted, for demos and trying kustomize-deploy by hand:
//
//	go run ./cmd/localcluster --dir /tmp/kd
//	export KUBECONFIG=/tmp/kd/kubeconfig
//
// It builds missing binaries first (minutes on a cold cache), writes
// DIR/kubeconfig once the cluster is usable, and stops every process on
// SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kustomize-deploy/kustomize-deploy/internal/testcluster"
)

func main() {
	os.Exit(run())
}

func run() int {
	dir := flag.String("dir", "", "directory for the cluster's data, logs and kubeconfig (required unless --build-only)")
	nodes := flag.Int("nodes", 2, "number of kwok fake nodes")
	buildOnly := flag.Bool("build-only", false, "build (or find cached) control-plane binaries, print their directory and exit")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *buildOnly {
		bin, err := testcluster.EnsureBinaries(ctx, os.Stderr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
			return 1
		}
		fmt.Println(bin)
		return 0
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "localcluster: --dir is required (where to write data, logs and the kubeconfig)")
		flag.Usage()
		return 2
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
		return 2
	}
	c, err := testcluster.Start(ctx, testcluster.Options{Dir: abs, Nodes: *nodes, Log: os.Stderr})
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
		return 1
	}
	defer c.Stop()
	fmt.Printf("cluster ready: export KUBECONFIG=%s (logs in %s; Ctrl-C stops it)\n", c.Kubeconfig, filepath.Join(abs, "logs"))
	return watch(ctx, c)
}

// watch runs until a signal arrives or a component dies on its own; the
// latter is an error worth reporting rather than a silently broken cluster.
func watch(ctx context.Context, c *testcluster.Cluster) int {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "localcluster: stopping")
			return 0
		case <-tick.C:
			if err := c.Exited(); err != nil {
				fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
				return 1
			}
		}
	}
}
