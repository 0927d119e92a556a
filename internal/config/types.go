package config

import "time"

// Set is what Read found: the units to run, and the ConfigMaps, Secrets
// and sources beside them.
type Set struct {
	// Units are sorted by file, then by their order in the file, Flux's
	// own sync (see Unit.Sync) first.
	Units []*Unit
	// Values are every ConfigMap and Secret in the files read, in file
	// and document order, so postBuild.substituteFrom can be resolved
	// from the repository before the cluster.
	Values []*Values
	// Sources are every GitRepository, OCIRepository and Bucket in the
	// files read, and Generators every ArtifactGenerator, in file and
	// document order: what units' sourceRefs are resolved against.
	Sources    []*Source    `yaml:",omitempty"`
	Generators []*Generator `yaml:",omitempty"`
	// Notifications are every notification Provider and Alert in the
	// files read and emitted by units' builds, in file and document
	// order: the run posts its units' events to them (see notify).
	Notifications []*Notification `yaml:",omitempty"`
	// Lockdown is Flux's multi-tenancy lockdown as the configuration
	// declares it: the flags of the controllers' Deployments its builds
	// emit, and FluxInstances' spec.cluster.multitenant (see Lockdown).
	Lockdown Lockdown `yaml:",omitempty"`
	// Notes are one line each about fields accepted but not acted on
	// (interval, retryInterval, v1beta2's validation) and dependencies
	// dropped, for verbose output.
	Notes []string
	// Files are the YAML files read, relative to the root, sorted: what
	// a configuration of no unit is explained with. Not part of what was
	// found (the goldens), which does not depend on where Read starts.
	Files []string `yaml:"-"`
}

// Lookup returns the Values of kind ("ConfigMap" or "Secret") named ref,
// in file order. More than one means the repository defines it twice
// (two overlays, say): which one Flux would see depends on what applies
// it, so a caller should treat that as ambiguous.
func (s *Set) Lookup(kind string, ref Ref) []*Values {
	var out []*Values
	for _, v := range s.Values {
		if v.Kind == kind && v.Ref == ref {
			out = append(out, v)
		}
	}
	return out
}

// Ref names a namespaced object, as Flux names a Kustomization.
type Ref struct{ Namespace, Name string }

func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// Unit is one Flux Kustomization, as kustomize-deploy runs it.
type Unit struct {
	// Name is the unit's name, which names its inventory Secret:
	// metadata.name, or "<namespace>-<name>" when another unit in the
	// set has the same metadata.name. Always a valid unit name (a DNS
	// label of at most 63 characters).
	Name string
	// Ref is metadata.namespace ("default" when absent) and metadata.name.
	Ref Ref
	// File is the file the Kustomization is in, relative to the root,
	// slash-separated; Line is the line of its first field.
	File string
	Line int
	// APIVersion is kustomize.toolkit.fluxcd.io/v1, v1beta2 or v1beta1.
	APIVersion string
	// Meta are the Kustomization's own metadata.labels and
	// metadata.annotations: what Alerts select its events by
	// (eventSources[].matchLabels), and what they add to them
	// (event.toolkit.fluxcd.io/ annotations).
	Meta Meta `yaml:",omitempty"`
	// EmittedBy are the Kustomizations whose builds emitted this one, the
	// configuration's first (see Set.Add); nil for one read from a file
	// of the configuration. File and Line are then where the object is
	// in its source (0: made by a generator or a patch).
	EmittedBy []Ref `yaml:"emittedBy,omitempty"`
	// Sync says the unit is Flux's own sync of the configuration (see
	// reader.sync): its path is the configuration's directory (or, given
	// as its one file, gotk-sync.yaml, the directory above it); its source
	// is this repository, and its build applies what the directory holds
	// and emits the Kustomizations to run.
	Sync bool `yaml:",omitempty"`
	// Source is spec.sourceRef, its namespace defaulted to Ref's: what
	// Path is relative to (see units' source resolution).
	Source SourceRef

	// Path is spec.path relative to the source's root, cleaned and
	// slash-separated; "." when absent (Flux: the root of the source).
	Path string
	// DependsOn are the Kustomizations to run first, their namespace
	// defaulted to the unit's own, as Flux does.
	DependsOn []Ref

	Prune, Force, Suspend bool
	// PruneSelector is v1alpha1's spec.prune, a label selector: pruning
	// deletes only the inventoried objects whose labels match it.
	PruneSelector string `yaml:"pruneSelector,omitempty"`
	// Tags are the annotation kustomize-deploy.dev/tags, comma-separated:
	// a run may include or exclude units by them (kluctl's
	// --include-tag, --exclude-tag).
	Tags []string `yaml:"tags,omitempty"`
	// HelmController is the annotation kustomize-deploy.dev/helm-controller:
	// the cluster's helm-controller deploys the unit's HelmReleases.
	HelmController bool `yaml:"helmController,omitempty"`
	// Wait checks the health of every applied object; Flux then ignores
	// HealthChecks.
	Wait bool
	// Timeout is Flux's GetTimeout: spec.timeout, else spec.interval less
	// 30s, at least 30s (v1, v1beta2); spec.timeout, else spec.interval,
	// at least 1m (v1beta1).
	Timeout time.Duration
	// HealthChecks are the objects whose health Flux assesses after the
	// apply when Wait is false.
	HealthChecks []HealthCheck
	// HealthCheckExprs are v1's CEL health checks: how objects of a kind
	// are judged, in place of kstatus.
	HealthCheckExprs []HealthCheckExpr `yaml:"healthCheckExprs,omitempty"`
	// ReadyExprs are v1's dependsOn[].readyExpr, in DependsOn's order:
	// CEL expressions that say, in place of its readiness, whether a
	// dependency lets the unit run.
	ReadyExprs []ReadyExpr `yaml:"readyExprs,omitempty"`
	// Document is the Kustomization as read (YAML), what a readyExpr
	// sees as self or dep; nil for one made otherwise.
	Document []byte `yaml:"-"`

	TargetNamespace, NamePrefix, NameSuffix string
	Images                                  []Image
	// Patches are spec.patches, followed by v1beta1/v1beta2's
	// patchesStrategicMerge (as untargeted patches) and patchesJson6902
	// (their operations rendered as a YAML list), in that order.
	Patches []Patch
	// Components are as written: paths relative to Path.
	Components              []string
	IgnoreMissingComponents bool
	// BuildMetadata are kustomize's buildMetadata options:
	// "originAnnotations", "transformerAnnotations".
	BuildMetadata []string
	// Labels and Annotations are spec.commonMetadata, set on every object.
	Labels, Annotations map[string]string

	// Substitute is postBuild.substitute; its values win over those of
	// SubstituteFrom.
	Substitute map[string]string
	// SubstituteFrom are postBuild.substituteFrom in order, each read from
	// the unit's namespace (Ref.Namespace); later ones win.
	SubstituteFrom []SubstituteRef
	// SubstituteStrategy is "WithVariables" (Flux's default: substitute
	// only when at least one variable is defined) or "Always".
	SubstituteStrategy string

	// Ignore are drift-detection ignore rules (v1's spec.ignore).
	Ignore []IgnoreRule

	ServiceAccountName string
	// SelfAccount is the serviceAccountName of the unit as its own build
	// emits it, when it applies itself with another (Flux's sync patched
	// by the multi-tenancy lockdown with serviceAccountName:
	// kustomize-controller): the account it runs as once applied. Not
	// part of its spec as written (SameSpec ignores it).
	SelfAccount string `yaml:"selfAccount,omitempty"`
	// ServiceAccountNamespace is v1alpha1's spec.serviceAccount.namespace;
	// "" means the unit's namespace (the toolkit's serviceAccountName).
	ServiceAccountNamespace string `yaml:"serviceAccountNamespace,omitempty"`
	// DeletionPolicy is resolved to "Delete", "Orphan" or
	// "WaitForTermination": Flux's default MirrorPrune is Delete when
	// Prune, else Orphan (and v1beta1/v1beta2, which lack the field,
	// behave as MirrorPrune).
	DeletionPolicy string
	// Decryption is nil when spec.decryption is absent.
	Decryption *Decryption
	// KubeConfig is nil when spec.kubeConfig is absent.
	KubeConfig *KubeConfig
	// Validation is v1beta1's spec.validation ("client", "server" or
	// "none"); "" when not set and in the other versions.
	Validation string

	// Refused are the problems of the Kustomization's own definition (a
	// field unknown, or not honoured, or of a wrong value): the unit is
	// refused when its turn comes, failing it and skipping its
	// dependents, while the others run. What could be read of it (its
	// name, dependencies, kubeConfig) is set; nothing else is used.
	Refused []*Error `yaml:",omitempty"`
	// Instance says the unit is the Kustomization a FluxInstance's
	// spec.sync makes (see instance): Flux's own sync when it applies
	// the configuration's directory, whatever its source's kind.
	Instance bool `yaml:",omitempty"`
}

// HealthCheck is an object whose health the unit waits for.
type HealthCheck struct {
	// APIVersion defaults to "apps/v1", as Flux does.
	APIVersion, Kind, Name string
	// Namespace is as written: Flux does not default it, so an empty one
	// names a cluster-scoped object.
	Namespace string
}

// HealthCheckExpr is one spec.healthCheckExprs entry.
type HealthCheckExpr struct {
	APIVersion, Kind            string
	Current, InProgress, Failed string `yaml:",omitempty"`
}

// ReadyExpr is the readyExpr of the dependsOn entry naming Dependency.
type ReadyExpr struct {
	Dependency Ref
	Expr       string
}

// Image is a kustomize image override.
type Image struct{ Name, NewName, NewTag, Digest string }

// Patch is a kustomize patch: a strategic merge patch or a JSON 6902 list
// of operations, as YAML (or JSON) text.
type Patch struct {
	Patch string
	// Target selects the objects to patch; nil lets kustomize take it
	// from a strategic merge patch's own apiVersion, kind and name.
	Target *Selector
}

// Selector selects objects by their identity and metadata, as kustomize's
// patch targets do.
type Selector struct {
	Group, Version, Kind, Name, Namespace string
	LabelSelector, AnnotationSelector     string
}

// SubstituteRef is one postBuild.substituteFrom entry.
type SubstituteRef struct {
	Kind string // "ConfigMap" or "Secret"
	Name string
	// Optional tolerates its absence (v1, v1beta2).
	Optional bool
}

// IgnoreRule leaves fields, by JSON pointer, out of drift detection and
// correction on the objects Target selects (all when nil).
type IgnoreRule struct {
	Paths  []string
	Target *Selector
}

// Decryption says to decrypt SOPS-encrypted objects before applying them.
type Decryption struct {
	// SecretName names a Secret in the unit's namespace holding the keys;
	// "" means only the keys kustomize-deploy is given otherwise.
	SecretName string
}

// KubeConfig says to apply to a remote cluster, whose kubeconfig is in a
// Secret in the unit's namespace.
type KubeConfig struct {
	SecretName string
	// Key is as written; "" means Flux's default: the "value" key, else
	// "value.yaml".
	Key string
}

// Values is a ConfigMap or Secret found in the files read.
type Values struct {
	Kind string // "ConfigMap" or "Secret"
	// Ref is metadata.namespace ("default" when absent) and metadata.name.
	Ref  Ref
	File string
	Line int
	// Data is a ConfigMap's data (binaryData is left out: Flux
	// substitutes from data only), or a Secret's data base64-decoded with
	// stringData laid over it, as the API server does. Nil only when
	// Encrypted.
	Data map[string]string
	// Encrypted is a SOPS-encrypted document (it has a top-level sops
	// key): Raw holds it, to be decrypted later.
	Encrypted bool
	Raw       []byte
}

// Meta are an object's labels and annotations (string values only).
type Meta struct {
	Labels      map[string]string `yaml:",omitempty"`
	Annotations map[string]string `yaml:",omitempty"`
}

// Notification is a Flux notification Provider or Alert
// (notification.toolkit.fluxcd.io), found in the files read or emitted
// by a unit's build. Only what names it is read here; the notify package
// reads the rest from Raw.
type Notification struct {
	Kind       string // NotificationProvider or NotificationAlert
	APIVersion string
	// Ref is metadata.namespace ("default" when absent) and metadata.name.
	Ref  Ref
	File string
	Line int
	// EmittedBy are the Kustomizations whose builds emitted it, the
	// configuration's first; nil for one read from a file of the
	// configuration.
	EmittedBy []Ref `yaml:"emittedBy,omitempty"`
	// Raw is the document as written (or as the build emitted it).
	Raw []byte `yaml:"-"`
}

// Notification kinds.
const (
	NotificationProvider = "Provider"
	NotificationAlert    = "Alert"
)
