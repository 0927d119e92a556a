package build

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// Annotation and label prefixes that configure how an object is deployed.
// Ours is checked first so a repository shared with Flux can override a
// Flux setting for kustomize-deploy alone.
const (
	// AnnotationPrefix prefixes kustomize-deploy's own annotations,
	// e.g. kustomize-deploy.dev/substitute.
	AnnotationPrefix = "kustomize-deploy.dev/"
	// FluxAnnotationPrefix prefixes the kustomize-controller annotations
	// that are honoured too, e.g. kustomize.toolkit.fluxcd.io/prune.
	FluxAnnotationPrefix = "kustomize.toolkit.fluxcd.io/"
)

// Keys and values looked up under both prefixes.
const (
	// SubstituteKey opts an object out of post-build substitution when set
	// to DisabledValue.
	SubstituteKey = "substitute"
	// DisabledValue is the value that turns a feature off for one object.
	DisabledValue = "disabled"
)

// Annotation returns the value of key (e.g. "substitute", "prune", "ssa",
// "force") under AnnotationPrefix or, failing that, FluxAnnotationPrefix.
// The bool reports whether either annotation is present.
func Annotation(u *unstructured.Unstructured, key string) (string, bool) {
	return lookup(u.GetAnnotations(), key)
}

// lookup finds key under either prefix in m, ours winning.
func lookup(m map[string]string, key string) (string, bool) {
	if v, ok := m[AnnotationPrefix+key]; ok {
		return v, true
	}
	v, ok := m[FluxAnnotationPrefix+key]
	return v, ok
}
