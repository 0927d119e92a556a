package units

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kustomize-deploy/kustomize-deploy/internal/config"
	"github.com/kustomize-deploy/kustomize-deploy/internal/source"
)

// ParseSource reads a mapping of a source to a directory checked out by
// the user, KIND/NAMESPACE/NAME=DIR (as --source and the action's
// sources input take it).
func ParseSource(s string) (config.SourceRef, string, error) {
	ref, dir, ok := strings.Cut(s, "=")
	parts := strings.Split(strings.TrimSpace(ref), "/")
	if !ok || len(parts) != 3 || slices.Contains(parts, "") || strings.TrimSpace(dir) == "" {
		return config.SourceRef{}, "", fmt.Errorf("want KIND/NAMESPACE/NAME=DIR (e.g. GitRepository/flux-system/podinfo=../podinfo), got %q", s)
	}
	switch parts[0] {
	case config.GitRepositoryKind, config.OCIRepositoryKind, config.BucketKind, config.ExternalArtifactKind:
	default:
		return config.SourceRef{}, "", fmt.Errorf("%q: the kind is GitRepository, OCIRepository, Bucket or ExternalArtifact, not %q", s, parts[0])
	}
	return config.SourceRef{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, strings.TrimSpace(dir), nil
}

// SourceError is a unit whose sourceRef names nothing kustomize-deploy
// can build: another repository not mapped to a directory, a source not
// among the configuration's objects, a kind it does not fetch. The unit
// fails (ArtifactFailed, as Flux's kustomize-controller fails a
// Kustomization whose source it cannot get) and nothing is built in its
// name, from this checkout least of all.
type SourceError struct {
	// Unit is the Kustomization, Source its sourceRef (or, for an
	// artifact, the generator's source at fault).
	Unit   *config.Unit
	Source config.SourceRef
	// Why says what is wrong, naming the source's file and URL.
	Why string
	// Fix gets past it (source.FixMapSource when none is more precise):
	// each front end names its own flag or input for it.
	Fix source.Fix
	// Err is the resolver's failure (a *source.Error), when there is one.
	Err error
}

func (e *SourceError) Unwrap() error { return e.Err }

func (e *SourceError) Error() string {
	return fmt.Sprintf("Kustomization %s (%s:%d): spec.sourceRef %s: %s; nothing is built from this checkout in its stead: check out %s and map it to a directory",
		e.Unit.Ref, e.Unit.File, e.Unit.Line, e.Unit.Source, e.Why, e.Source)
}
