// Package pipeline is kustomize-deploy's engine: it runs one unit through
// the steps Flux's kustomize-controller runs (dependencies, build, decrypt,
// substitute, validate, apply, inventory, prune, wait), in that order, and
// returns a result.Result saying what changed. It prints nothing but the
// progress lines it is handed a writer for.
package pipeline

import (
	"context"
	"io"
	"time"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
	"github.com/kustomize-deploy/kustomize-deploy/internal/diff"
	"github.com/kustomize-deploy/kustomize-deploy/internal/health"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/images"
	"github.com/kustomize-deploy/kustomize-deploy/internal/inventory"
	"github.com/kustomize-deploy/kustomize-deploy/internal/kube"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
	"github.com/kustomize-deploy/kustomize-deploy/internal/paths"
	"github.com/kustomize-deploy/kustomize-deploy/internal/prune"
	"github.com/kustomize-deploy/kustomize-deploy/internal/resourceset"
	"github.com/kustomize-deploy/kustomize-deploy/internal/result"
	"github.com/kustomize-deploy/kustomize-deploy/internal/validate"
	"github.com/kustomize-deploy/kustomize-deploy/internal/workspace"
)

// Options describe one unit and how to run it. Front ends make them from
// a Spec (Spec.Options), which checks every value.
type Options struct {
	// Name is the unit's name; it names its inventory Secret.
	Name string
	// Dir is the directory to build and the root confining the build,
	// resolved once (paths.Resolve).
	Dir paths.Dir
	// Revision is recorded in the inventory (git commit, usually), with
	// RevisionTime, when it was committed (zero: unknown): a run of an
	// older commit than the last applied one is refused unless
	// AllowRollback.
	Revision      string
	RevisionTime  time.Time
	AllowRollback bool
	// IncludeTags and ExcludeTags pick the unit's HelmReleases by their
	// tags (tags.Selects), with the unit's own tags, UnitTags, counted as
	// theirs: a release they leave out is left as it is, its objects
	// neither applied nor pruned.
	IncludeTags, ExcludeTags, UnitTags []string
	// RollbackOf, when the run applies a revision of the unit's history
	// again (kustomize-deploy rollback), is that revision's number.
	RollbackOf int
	// RunBy and RunURL say who ran it (a GitHub actor, else the user) and
	// where (a GitHub Actions run): the unit's history keeps them.
	RunBy, RunURL string
	// Config names the configuration the unit comes from (empty for a
	// unit run on its own), recorded so that a unit which leaves it can be
	// garbage-collected per DeletionPolicy (Delete, Orphan,
	// WaitForTermination; empty means Delete).
	Config         string
	DeletionPolicy string
	// WaitForTermination makes Delete wait, up to Timeout, until the
	// objects it deleted are gone (finalizers run), as Flux's deletion
	// policy of that name does.
	WaitForTermination bool
	// Suspend skips the unit, as a Flux Kustomization's spec.suspend does
	// (a unit suspended with the suspend command is skipped too).
	Suspend bool
	// Holder names this run to another that waits for the unit's lock (a
	// workflow run's URL); empty means user@host and process id.
	// LockTimeout bounds that wait (0: 5m).
	Holder      string
	LockTimeout time.Duration
	// InventoryNamespace holds the unit's inventory; empty means the
	// kubeconfig context's namespace.
	InventoryNamespace string
	// Namespace is given to objects of namespaced kinds that name none;
	// empty means the kubeconfig context's namespace.
	Namespace string
	// DependsOn lists units that must be Ready before this one runs.
	// With WaitForDependencies they are waited for, that long at most,
	// until Ready at Revision (or a newer commit): another job's units.
	// Dependency, when set, reads a dependency's inventory (handled false:
	// the unit's own cluster and inventory namespace).
	DependsOn []string
	// ReadyExprs, by dependency of DependsOn, replace the check that it
	// is Ready with a readyExpr: nil when the dependency, whose inventory
	// is given, lets the unit run, else why not.
	ReadyExprs          map[string]func(ctx context.Context, inv *inventory.Inventory) error
	WaitForDependencies time.Duration
	Dependency          func(ctx context.Context, name string) (inv *inventory.Inventory, handled bool, err error)

	// Build carries kustomize options; its Root and Path are filled from
	// Dir, inside a scratch copy.
	Build build.Options
	// Substitute are post-build ${VAR} values. Variables, when set, adds
	// values found when the unit is built (a Flux Kustomization's
	// substituteFrom: ConfigMaps and Secrets), Substitute winning, and
	// names the variables whose values are secret (a Secret's, or
	// decrypted): the run masks their values in its messages and, in any
	// object they land in, the fields they land in. SubstituteSecret names
	// those of Substitute (a run renders with those Variables finds added;
	// its Options stay as given).
	// SubstitutePublic says no value is secret (from Git, or a
	// ConfigMap), so they may be hashed into the inventory to reuse the
	// build. Values from anywhere else may be secret: a run with them is
	// never reused. With SubstituteAlways, ${VAR:=default} forms are
	// substituted even when no value is defined (Flux's
	// substituteStrategy: Always).
	Substitute       map[string]string
	Variables        func(ctx context.Context) (vars map[string]string, secret []string, err error)
	SubstituteSecret []string
	SubstitutePublic bool
	SubstituteAlways bool
	// Charts, when set, renders the unit's Flux HelmReleases into their
	// charts' objects, which are then validated, applied, pruned and waited
	// for like any other; the HelmReleases and their sources
	// (HelmRepository...) are read, not applied, and the cluster needs no
	// Flux CRDs. Nil applies them as they are, for clusters that run
	// helm-controller.
	Charts *helm.Options
	// RunFlux is set for the units of a configuration of Flux
	// Kustomizations: the Flux Kustomizations and sources their builds
	// emit are run and read by the configuration, not applied, and
	// Flux's own controllers are not installed unless FluxControllers
	// (see RunByConfiguration).
	RunFlux, FluxControllers bool
	// RemoveHelmRecords removes, once the unit applied and became ready,
	// the storage records (Secrets, ConfigMaps) of the Helm releases whose
	// objects the run took over (as their ownership annotations named
	// them). A later `helm upgrade`, or a helm-controller still running,
	// then finds no release to fight over.
	RemoveHelmRecords bool
	// ResourceSets is what expanding Flux Operator's ResourceSets reads
	// besides the unit (see expandResourceSets): the GitHub client their
	// input providers list pull requests, branches and tags with, and the
	// run's cache of its answers. Its Lookup and WaitForDependencies are
	// set by a run on a cluster (the cluster's objects, the unit's
	// WaitForDependencies).
	ResourceSets resourceset.Options
	// Decryption is what SOPS data is decrypted with: private keys (age,
	// PGP) and which key services may be reached with what credentials.
	// Its Reveal is set by Render (to Mask).
	Decryption decrypt.Options

	Validation result.Validation
	// KnownKinds are kinds that CRDs elsewhere define (another unit of the
	// configuration, run before this one): objects of them pass the check
	// that, before anything is written, every kind is served by the
	// cluster or defined by a CRD of the unit.
	KnownKinds []schema.GroupKind
	// Earlier, in a diff, is what the units run before this one in the
	// same run would create (see Prerequisites): it counts as present.
	// Provide, when set, is told what a diff that got through its dry-run
	// would create, for the units after it. An apply needs neither: what
	// the units before it apply exists.
	Earlier *Prerequisites
	Provide func(Prerequisites)
	// Schemas are what the offline schema check (client validation, the
	// offline diff) knows besides the built-in kinds and the unit's own
	// CRDs: a schema directory, and in an offline diff of a configuration
	// the CRDs of all its units. Nil knows nothing more.
	Schemas *validate.Known
	// ResolveImages, when set, pins every workload's image to the digest
	// its tag names at render time (images.Resolve), so that what was
	// reviewed is what runs. RenderSealed (a fork's pull request) never
	// resolves: it reaches no registry.
	ResolveImages images.Resolver
	// Noise is what a pull request's diff folds: a change of those
	// fields alone is marked (result.Entry.Noise), its diff kept.
	Noise diff.Noise
	Force bool
	Prune bool
	// PruneBudget bounds what one apply may prune; over it, the apply (and
	// a diff, as a warning to reviewers) fails before anything is written.
	PruneBudget prune.Budget
	// PruneSelector, when set, is a label selector (v1alpha1's
	// spec.prune): pruning deletes only the objects matching it.
	PruneSelector string
	Wait          bool
	Timeout       time.Duration
	// Wait waits for every object applied to become ready; HealthChecks
	// are waited for too, and alone when not Wait (as Flux does).
	HealthChecks []object.ID
	// HealthExprs judge the kinds they name by CEL expressions
	// (spec.healthCheckExprs) instead of kstatus, in every wait; a
	// HelmRelease's own judge the kinds this leaves to kstatus.
	HealthExprs health.Evaluators
	// Ignore are a Kustomization's spec.ignore rules: fields, by JSON
	// pointer, of the objects each selects that diffs, applies and drift
	// leave as the cluster has them (see the apply package).
	Ignore []jsondiff.IgnoreRule
	// ServiceAccount applies as this service account (impersonation) of
	// ServiceAccountNamespace (default: the inventory namespace).
	ServiceAccount          string
	ServiceAccountNamespace string
	// Clusters connects, as the caller, to the cluster whose kubeconfig
	// stands in for the kubeConfig Secret a HelmRelease names
	// (spec.kubeConfig.secretRef.name): its objects are applied, pruned
	// and waited for there. Its error says how to give one; nil gives
	// none, and such a release fails the unit.
	Clusters func(secret string) (*kube.Clients, error)
	// ServiceAccountBy names the unit of the run whose build holds that
	// service account, for the error when it does not exist.
	ServiceAccountBy string
	// Notes are what the configuration says of the unit before it runs
	// (a field read and not acted on), one line each, first among the
	// notes of its result.
	Notes []string
	// Recheck dry-runs every object, also those the inventory shows
	// untouched since the last run (same manifest digest, same live
	// resourceVersion), which are otherwise skipped.
	Recheck bool

	// Base, with At, makes a diff three-way (a pull request's diff against
	// the cluster): entries' Change is what the PR changes (the unit at
	// Base against this revision) and their Drift what was changed in the
	// cluster since the revision last applied, which merging reverts. At
	// checks a unit (head: its directory here) out at a commit: nil when
	// it does not exist there, an error wrapping checkout.ErrMissing when
	// the commit is not in the checkout. Without them a diff is two-way
	// (live against desired).
	Base string
	At   func(ctx context.Context, rev string, head paths.Dir) (*paths.Dir, error)

	// Snapshot lists the repository's files for the build, once for all
	// the units of a run (workspace.List of Dir.Root); nil lists them for
	// this unit alone.
	Snapshot *workspace.Snapshot
	// Preloaded, when set, is the unit's inventory as one read of every
	// inventory in namespace found it when the configuration's run began
	// (nil: none then); ok is false for another namespace. An apply
	// that only reads starts from it instead of reading its own (see
	// applyUnlocked); anything it would write is checked against the
	// inventory read again under the lock.
	Preloaded func(namespace, name string) (inv *inventory.Inventory, ok bool)
	// Builds shares the builds of one configuration's run, so that a unit
	// discovery built is not built again (see Builds); nil shares none.
	Builds *Builds

	// Progress receives progress lines (stage starts, waits); nil discards.
	Progress io.Writer
	// Mask is called with every decrypted secret value (and its base64
	// form) as soon as they are known, before anything else is reported, so
	// the caller can hide them from logs (e.g. ::add-mask::).
	Mask func(values []string)
}

// DefaultOptions returns the defaults of the CLI and the Action.
func DefaultOptions() Options {
	return Options{
		Validation: result.ValidationServer,
		Decryption: decrypt.Options{AWSKMS: true},
		Prune:      true,
		Wait:       true,
		Timeout:    5 * time.Minute,
	}
}
