package apply

import (
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Masks shown in place of Secret values, as Flux shows them: a changed value
// shows as before/after, an unchanged or new one as a plain mask.
const (
	Mask       = "***"
	MaskBefore = "*** (before)"
	MaskAfter  = "*** (after)"
)

var (
	ssaIgnore       = [2]string{object.SSAKey, object.SSAIgnore}
	ssaIfNotPresent = [2]string{object.SSAKey, object.SSAIfNotPresent}
	forceEnabled    = [2]string{object.ForceKey, object.Enabled}
	ssaMerge        = [2]string{object.SSAKey, object.SSAMerge}
)

func kdSelector(kv [2]string) map[string]string { return object.Selector(kv[0], kv[1]) }

// maskSecrets replaces the data and stringData values of Secrets so no
// value is ever rendered, while a reader can still tell which keys changed.
// before may be nil (the Secret is new).
func maskSecrets(before, after *unstructured.Unstructured) {
	if !utils.IsSecret(after) {
		return
	}
	var old map[string]any
	if before != nil {
		old = secretValues(before)
	}
	for _, field := range []string{"data", "stringData"} {
		m, ok, _ := unstructured.NestedMap(after.Object, field)
		if !ok {
			continue
		}
		for k, v := range m {
			switch prev, had := old[k]; {
			case had && prev != v:
				m[k] = MaskAfter
			default:
				m[k] = Mask
			}
		}
		_ = unstructured.SetNestedMap(after.Object, m, field)
	}
	if before == nil {
		return
	}
	newVals := secretValues(after)
	for _, field := range []string{"data", "stringData"} {
		m, ok, _ := unstructured.NestedMap(before.Object, field)
		if !ok {
			continue
		}
		for k := range m {
			if newVals[k] == MaskAfter {
				m[k] = MaskBefore
			} else {
				m[k] = Mask
			}
		}
		_ = unstructured.SetNestedMap(before.Object, m, field)
	}
}

// secretValues merges data and stringData into one key→value map.
func secretValues(u *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for _, field := range []string{"data", "stringData"} {
		m, _, _ := unstructured.NestedMap(u.Object, field)
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// MaskSecret returns u, or for a Secret a copy with every value masked.
func MaskSecret(u *unstructured.Unstructured) *unstructured.Unstructured {
	if !utils.IsSecret(u) {
		return u
	}
	c := u.DeepCopy()
	maskSecrets(nil, c)
	return c
}
