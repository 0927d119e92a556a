// Command kustomize-deploy applies kustomize overlays to a cluster the way
// Flux's kustomize-controller does, from a CI step or a laptop.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
