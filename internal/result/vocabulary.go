package result

import (
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Reason is how a run ended, in the vocabulary of Flux's
// kustomize-controller (plus the outcomes of modes Flux does not have:
// diff, offline diff, delete). The inventory records it too.
type Reason string

// Reasons.
const (
	ReasonApplySucceed       Reason = "ApplySucceed"
	ReasonApplyFailed        Reason = "ApplyFailed"
	ReasonBuildFailed        Reason = "BuildFailed"
	ReasonArtifactFailed     Reason = "ArtifactFailed"
	ReasonValidationFailed   Reason = "ValidationFailed"
	ReasonDependencyNotReady Reason = "DependencyNotReady"
	ReasonHealthCheckFailed  Reason = "HealthCheckFailed"
	ReasonProgressing        Reason = "Progressing"
	ReasonSuspended          Reason = "Suspended"
	ReasonPruneFailed        Reason = "PruneFailed"
	// ReasonAccessDenied is fluxcd/pkg's apis/acl AccessDeniedReason: a
	// reference Flux's multi-tenancy lockdown refuses (a sourceRef in
	// another namespace under --no-cross-namespace-refs).
	ReasonAccessDenied Reason = "AccessDenied"
	// ReasonTestFailed is helm-controller's: a Helm release's tests
	// (spec.test.enable) failed.
	ReasonTestFailed Reason = "TestFailed"
	// ReasonDiffSucceed ends a diff whose every object could be dry-run.
	ReasonDiffSucceed Reason = "DiffSucceed"
	// ReasonOfflineDiffSucceed ends a diff of two renderings made without
	// cluster access.
	ReasonOfflineDiffSucceed Reason = "OfflineDiffSucceed"
	// ReasonDeleteSucceed ends a delete that removed the unit entirely.
	ReasonDeleteSucceed Reason = "DeleteSucceed"
	// ReasonLocked ends a run that waited too long for another run of the
	// same unit to finish.
	ReasonLocked Reason = "LockTimeout"
	// ReasonCancelled ends a unit that a cancelled run never started.
	ReasonCancelled Reason = "Cancelled"
	// ReasonPinned skips a unit pinned to another revision.
	ReasonPinned Reason = "Pinned"
	// ReasonOutOfOrder skips a unit whose last applied revision is newer
	// than the one this run would apply: a slow run never rolls back a
	// newer deploy.
	ReasonOutOfOrder Reason = "RevisionOutOfOrder"
	// ReasonSourceDeferred skips, in a run that applies nothing (a diff,
	// a drift report), a unit whose source reads its credentials from an
	// object an earlier unit creates, which does not exist yet: an apply
	// resolves the source once that unit has been applied.
	ReasonSourceDeferred Reason = "SourceDeferred"
)

// SkipsByDesign reports whether a run ending with r did nothing on
// purpose (suspended, pinned, an older revision refused): not a failure.
func (r Reason) SkipsByDesign() bool {
	return r == ReasonSuspended || r == ReasonPinned || r == ReasonOutOfOrder || r == ReasonSourceDeferred
}

// Mode is what a run was asked to do.
type Mode string

// Modes.
const (
	ModeApply  Mode = "apply"
	ModeDiff   Mode = "diff"
	ModeDelete Mode = "delete"
	// ModeDrift compares the cluster with Git and, if asked, corrects it.
	ModeDrift Mode = "drift"
)

// Writes reports whether a run in mode m may write to the cluster.
func (m Mode) Writes() bool { return m == ModeApply || m == ModeDelete || m == ModeDrift }

// Validation is how objects are checked before anything is written.
type Validation string

// Validation modes.
const (
	// ValidationServer dry-runs every object that may change.
	ValidationServer Validation = "server"
	// ValidationClient checks every object offline against the
	// Kubernetes OpenAPI schemas and the build's CRDs.
	ValidationClient Validation = "client"
	// ValidationNone skips validation (a failed dry-run still stops the
	// unit before any write).
	ValidationNone Validation = "none"
)

// Validations lists the validation modes, for help texts and checks.
var Validations = []Validation{ValidationServer, ValidationClient, ValidationNone}

// Stages lists the apply stages in the order they are applied. Pruning,
// StagePrune, comes after all of them and deletes in the reverse order.
var Stages = []Stage{StageDefinitions, StageClasses, StageResources}

// Order is s's position among the stages, then StagePrune, then
// StageHooks; an unknown stage sorts after every known one.
func (s Stage) Order() int {
	for i, o := range Stages {
		if s == o {
			return i
		}
	}
	switch s {
	case StagePrune:
		return len(Stages)
	case StageHooks:
		return len(Stages) + 1
	}
	return len(Stages) + 2
}

// StageOf is the stage u is applied in, as fluxcd/pkg/ssa's
// ApplyAllStaged classifies objects: CRDs, Namespaces and ClusterRoles
// first, then classes (StorageClass, IngressClass, ...), then the rest.
func StageOf(u *unstructured.Unstructured) Stage {
	switch {
	case utils.IsClusterDefinition(u):
		return StageDefinitions
	case utils.IsClassDefinition(u):
		return StageClasses
	default:
		return StageResources
	}
}

// StageOfKind is StageOf for an object known only by API version and kind
// (an inventory entry, say).
func StageOfKind(apiVersion, kind string) Stage {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return StageOf(u)
}
