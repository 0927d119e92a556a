package object

// Per-object behaviour is set with annotations under our prefix; the same
// keys under Flux's prefix are honoured too, so manifests written for Flux's
// kustomize-controller work unchanged. Ours wins when both are set.
const (
	AnnotationPrefix     = "kustomize-deploy.dev/"
	FluxAnnotationPrefix = "kustomize.toolkit.fluxcd.io/"
)

// Annotation keys (without prefix) and their values.
const (
	SSAKey        = "ssa"        // Override (default), Merge, IfNotPresent, Ignore
	ForceKey      = "force"      // enabled
	PruneKey      = "prune"      // disabled
	SubstituteKey = "substitute" // disabled

	SSAMerge        = "Merge"
	SSAIfNotPresent = "IfNotPresent"
	SSAIgnore       = "Ignore"
	Enabled         = "enabled"
	Disabled        = "disabled"
)

// Selector matches objects that carry key=value under either prefix, in the
// form fluxcd/pkg/ssa's selectors take (any pair matching is a match).
func Selector(key, value string) map[string]string {
	return map[string]string{AnnotationPrefix + key: value, FluxAnnotationPrefix + key: value}
}

// HelmResourcePolicy set to HelmKeep marks an object Helm never deletes
// (a chart's PersistentVolumeClaim, say): pruning leaves it too.
const (
	HelmResourcePolicy = "helm.sh/resource-policy"
	HelmKeep           = "keep"
)

// Setting returns the value of key (e.g. PruneKey) in m, an object's
// annotations or labels, under AnnotationPrefix or, failing that,
// FluxAnnotationPrefix. The bool reports whether either is present.
func Setting(m map[string]string, key string) (string, bool) {
	if v, ok := m[AnnotationPrefix+key]; ok {
		return v, true
	}
	v, ok := m[FluxAnnotationPrefix+key]
	return v, ok
}
