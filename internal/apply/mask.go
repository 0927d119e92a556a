package apply

import (
	"encoding/base64"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/decrypt"
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

// secretStrings are the values of a Secret's data (as written, and
// decoded) and stringData; none for nil.
func secretStrings(u *unstructured.Unstructured) []string {
	if u == nil {
		return nil
	}
	var out []string
	for _, field := range []string{"data", "stringData"} {
		vals, _, _ := unstructured.NestedMap(u.Object, field)
		for _, v := range vals {
			s, ok := v.(string)
			if !ok {
				continue
			}
			out = append(out, s)
			if plain, err := base64.StdEncoding.DecodeString(s); err == nil && field == "data" {
				out = append(out, string(plain))
			}
		}
	}
	return out
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

// maskEncrypted replaces the SOPS ciphertext left in objects rendered
// without decryption (the offline diff) with masks, in any kind of object
// and at any depth: equal ciphertexts as ***, a changed one as
// *** (before) / *** (after), as maskSecrets shows a changed Secret value.
// before may be nil (the object is new).
func maskEncrypted(before, after *unstructured.Unstructured) {
	var b any
	if before != nil {
		b = before.Object
	}
	nb, na := maskPair(b, after.Object)
	if before != nil {
		before.Object = nb.(map[string]any)
	}
	after.Object = na.(map[string]any)
}

// maskPair masks the encrypted values of a and of b, its counterpart in
// the other object (nil when there is none).
func maskPair(b, a any) (any, any) {
	switch av := a.(type) {
	case map[string]any:
		bm, isMap := b.(map[string]any)
		if !isMap {
			return maskAlone(b), maskAlone(a)
		}
		for k, v := range av {
			bv, had := bm[k]
			nb, na := maskPair(bv, v)
			av[k] = na
			if had {
				bm[k] = nb
			}
		}
		for k, v := range bm {
			if _, ok := av[k]; !ok {
				bm[k] = maskAlone(v)
			}
		}
		return bm, av
	case []any:
		bs, isList := b.([]any)
		if !isList {
			return maskAlone(b), maskAlone(a)
		}
		for i := range av {
			if i < len(bs) {
				bs[i], av[i] = maskPair(bs[i], av[i])
			} else {
				av[i] = maskAlone(av[i])
			}
		}
		for i := len(av); i < len(bs); i++ {
			bs[i] = maskAlone(bs[i])
		}
		return bs, av
	case string:
		bs, isString := b.(string)
		switch {
		case !decrypt.IsEncrypted(av):
			return maskAlone(b), a
		case !isString || bs == av:
			return maskAlone(b), Mask
		case decrypt.IsEncrypted(bs):
			return MaskBefore, MaskAfter
		default:
			return b, MaskAfter
		}
	}
	return maskAlone(b), a
}

// maskAlone masks every encrypted value in v.
func maskAlone(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = maskAlone(e)
		}
	case []any:
		for i, e := range t {
			t[i] = maskAlone(e)
		}
	case string:
		if decrypt.IsEncrypted(t) {
			return Mask
		}
	}
	return v
}

// minSecretLen: shorter secret values would mask ordinary fields
// everywhere; the log masker ignores them too.
const minSecretLen = 4

// maskSecretFields masks every string field of after that contains one of
// secrets, and the same field of before (nil when the object is new):
// a value substituted from a Secret, or decrypted, into an object of any
// kind. The live value of such a field is an older secret, unknown to any
// masker. A changed field shows as *** (before) / *** (after). A field of
// before that after lacks (a renamed key, a shorter list, another type)
// is masked if it holds a secret: the diff shows it as removed.
func maskSecretFields(before, after *unstructured.Unstructured, secrets []string) {
	var long []string
	for _, s := range secrets {
		if len(strings.TrimSpace(s)) >= minSecretLen {
			long = append(long, s)
		}
	}
	if len(long) == 0 {
		return
	}
	var b any
	if before != nil {
		b = before.Object
	}
	holds := func(v string) bool {
		return slices.ContainsFunc(long, func(s string) bool { return strings.Contains(v, s) })
	}
	// hide masks what holds a secret in a value of before that has no
	// counterpart in after.
	var hide func(v any) any
	hide = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				t[k] = hide(e)
			}
		case []any:
			for i, e := range t {
				t[i] = hide(e)
			}
		case string:
			if holds(t) {
				return Mask
			}
		}
		return v
	}
	var walk func(b, a any) (any, any)
	walk = func(b, a any) (any, any) {
		switch av := a.(type) {
		case map[string]any:
			bm, isMap := b.(map[string]any)
			for k, v := range av {
				bv, had := bm[k]
				nb, na := walk(bv, v)
				av[k] = na
				if had {
					bm[k] = nb
				}
			}
			if !isMap {
				return hide(b), av
			}
			for k, v := range bm {
				if _, ok := av[k]; !ok {
					bm[k] = hide(v)
				}
			}
			return bm, av
		case []any:
			bs, isList := b.([]any)
			for i := range av {
				var bv any
				if i < len(bs) {
					bv = bs[i]
				}
				nb, na := walk(bv, av[i])
				av[i] = na
				if i < len(bs) {
					bs[i] = nb
				}
			}
			if !isList {
				return hide(b), av
			}
			for i := len(av); i < len(bs); i++ {
				bs[i] = hide(bs[i])
			}
			return bs, av
		case string:
			if !holds(av) {
				return hide(b), a
			}
			switch bs, isString := b.(string); {
			case b == nil:
				return nil, Mask
			case isString && bs == av:
				return Mask, Mask
			default:
				return MaskBefore, MaskAfter
			}
		}
		return hide(b), a
	}
	nb, na := walk(b, after.Object)
	after.Object = na.(map[string]any)
	if before != nil {
		before.Object = nb.(map[string]any)
	}
}
