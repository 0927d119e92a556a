package pipeline

import (
	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
)

// fileErrors are the files of the repository that err says caused it,
// with their lines where known (see build.FileError): what front ends
// annotate. Their messages are masked with the result's.
func fileErrors(err error) []result.FileError {
	var out []result.FileError
	for _, fe := range build.FileErrors(err) {
		out = append(out, result.FileError{File: fe.File, Line: fe.Line, Message: fe.Error()})
	}
	return out
}
