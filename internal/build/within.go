package build

import "github.com/kustomize-deploy/kustomize-deploy/internal/paths"

// within reports whether path is dir or below it.
func within(dir, path string) bool {
	_, ok := paths.Within(dir, path)
	return ok
}
