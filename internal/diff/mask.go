package diff

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/mask"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Masks shown in place of secret values. A value is masked by where it
// came from (see Secrets), not by what it is: a secret value that did not
// change is a plain Mask; one that changed shows, on the desired side,
// MaskChanged with a short keyed hash of the new value and, on the other
// side, MaskHashed with the old one's (mask.Hash: equal values have equal
// hashes within one run, and the hash gives nothing away). SOPS
// ciphertext left in an offline diff changes on every re-encryption, so a
// changed ciphertext is only said to be one: MaskBefore / MaskAfter.
const (
	Mask       = "***"
	MaskBefore = "*** (before)"
	MaskAfter  = "*** (after)"
)

// MaskChanged is the desired side of a secret value that changed.
func MaskChanged(v any) string { return "*** (changed, sha256:" + hashOf(v) + ")" }

// MaskHashed is the other side of a secret value that changed, and a map
// key that came from a secret (two such keys of one map stay apart).
func MaskHashed(v any) string { return "*** (sha256:" + hashOf(v) + ")" }

// hashOf hashes a string as it is and any other value as JSON.
func hashOf(v any) string {
	if s, ok := v.(string); ok {
		return mask.Hash([]byte(s))
	}
	data, _ := json.Marshal(v) // a decoded manifest's value always encodes
	return mask.Hash(data)
}

// Secrets say what a diff hides besides Secret values and SOPS
// ciphertext, which it always hides.
type Secrets struct {
	// Fields are where the object holds values that came from a secret
	// (decrypted, or substituted from a Secret), on either side of the
	// diff: the other side of such a field holds an older secret.
	Fields *object.SecretFields
	// Values are secret values the run knows. They are looked for only
	// where a diff shows what Git does not say: on the live side, in a
	// field whose desired value differs or that the desired object lacks
	// (a renamed key, a shorter list). Values shorter than mask's minimum
	// are ignored there, as the log masker ignores them.
	Values []string
}

// Masked returns u with its secret values masked as a new object's are in
// a diff: every value of a Secret, every field fields names (and map keys
// it names, as MaskHashed), every SOPS ciphertext. It returns u itself
// when there is nothing to mask.
func Masked(u *unstructured.Unstructured, fields *object.SecretFields) *unstructured.Unstructured {
	if !utils.IsSecret(u) && fields.Empty() && !holdsCiphertext(u.Object) {
		return u
	}
	c := u.DeepCopy()
	_, c = maskObjects(nil, c, Secrets{Fields: fields})
	return c
}

// maskObjects masks before and after (nil before: after is new) in place
// and returns them.
func maskObjects(before, after *unstructured.Unstructured, s Secrets) (*unstructured.Unstructured, *unstructured.Unstructured) {
	m := newMasker(before, after, s)
	var b any
	if before != nil {
		b = before.Object
	}
	nb, na := m.walk(nil, b, after.Object, before != nil, true)
	after.Object = na.(map[string]any)
	if before != nil {
		before.Object = nb.(map[string]any)
	}
	return before, after
}

// lastApplied is kubectl's copy of the whole object it last applied: in
// an object holding secret values, it holds them too.
var lastApplied = object.FieldPath{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}

// masker masks one pair of objects.
type masker struct {
	fields, keys map[string]bool // joined paths
	// secretData: the object is a Secret, whose data and stringData are
	// masked key by key (see maskSecretData).
	secretData bool
	// known are the run's secret values, looked for where Git does not
	// say what a field holds (see Secrets.Values); own are a Secret's
	// values, looked for everywhere in it (kubectl's last-applied
	// annotation holds them all).
	known, own *mask.Masker
}

func newMasker(before, after *unstructured.Unstructured, s Secrets) *masker {
	m := &masker{fields: map[string]bool{}, keys: map[string]bool{}, known: mask.New(), own: mask.New()}
	if !s.Fields.Empty() {
		for _, p := range s.Fields.Fields {
			m.fields[joinPath(p)] = true
		}
		for _, p := range s.Fields.Keys {
			m.keys[joinPath(p)] = true
		}
	}
	m.known.Add(s.Values...)
	if utils.IsSecret(after) || !s.Fields.Empty() {
		m.fields[joinPath(lastApplied)] = true
	}
	if utils.IsSecret(after) {
		m.secretData = true
		own := append(secretStrings(before), secretStrings(after)...)
		m.own.Add(own...)
		m.known.Add(own...)
		maskSecretData(before, after)
	}
	return m
}

func joinPath(p []string) string { return strings.Join(p, "\x00") }

// walk masks b (before; hasB says there is one) and a (after) at path,
// in place, and returns them. What a holds is shown unless it came from a
// secret or is ciphertext; what b holds, in a field a also has, is
// masked with it, and otherwise by value.
func (m *masker) walk(path []string, b, a any, hasB, hasA bool) (any, any) {
	if !hasA {
		return m.alone(path, b), a
	}
	if m.fields[joinPath(path)] {
		return secretPair(b, a, hasB)
	}
	if m.secretData && len(path) == 1 && (path[0] == "data" || path[0] == "stringData") {
		// Values are masked key by key already; keys recorded as made
		// of a secret are not. (Its keys are not looked for by value:
		// they are names, and a Secret's values are all known here.)
		am, _ := a.(map[string]any)
		if bm, ok := b.(map[string]any); ok {
			m.renameKeys(path, bm, bm)
		}
		m.renameKeys(path, am, am)
		return b, a
	}
	switch av := a.(type) {
	case map[string]any:
		bm, isMap := b.(map[string]any)
		if hasB && !isMap {
			b = m.alone(path, b)
		}
		for k, v := range av {
			bv, had := bm[k]
			nb, na := m.walk(child(path, k), bv, v, had, true)
			av[k] = na
			if had {
				bm[k] = nb
			}
		}
		for k, v := range bm {
			if _, ok := av[k]; !ok {
				bm[k] = m.alone(child(path, k), v)
			}
		}
		if isMap {
			m.renameKeys(path, bm, av)
		}
		m.renameKeys(path, av, av)
		if isMap {
			return bm, av
		}
		return b, av
	case []any:
		bs, isList := b.([]any)
		if hasB && !isList {
			b = m.alone(path, b)
		}
		for i := range av {
			var bv any
			if i < len(bs) {
				bv = bs[i]
			}
			nb, na := m.walk(child(path, itoa(i)), bv, av[i], i < len(bs), true)
			av[i] = na
			if i < len(bs) {
				bs[i] = nb
			}
		}
		for i := len(av); i < len(bs); i++ {
			bs[i] = m.alone(child(path, itoa(i)), bs[i])
		}
		if isList {
			return bs, av
		}
		return b, av
	case string:
		if object.IsEncrypted(av) {
			return ciphertextPair(b, av, hasB)
		}
		if m.own.String(av) != av {
			if hasB {
				b = Mask
			}
			return b, Mask
		}
	}
	if !hasB {
		return b, a
	}
	switch bv := b.(type) {
	case map[string]any, []any:
		return m.alone(path, b), a
	case string:
		if object.IsEncrypted(bv) {
			return Mask, a
		}
	}
	if !reflect.DeepEqual(b, a) {
		b = m.byValue(b)
	}
	return b, a
}

// alone masks v, which the other side lacks, at path: what came from a
// secret, ciphertext, and what holds a value the run knows.
func (m *masker) alone(path []string, v any) any {
	if m.fields[joinPath(path)] {
		return Mask
	}
	if m.secretData && len(path) == 1 && (path[0] == "data" || path[0] == "stringData") {
		if t, ok := v.(map[string]any); ok {
			m.renameKeys(path, t, t)
		}
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = m.alone(child(path, k), e)
		}
		m.renameKeys(path, t, nil)
	case []any:
		for i, e := range t {
			t[i] = m.alone(child(path, itoa(i)), e)
		}
	case string:
		if object.IsEncrypted(t) {
			return Mask
		}
		return m.byValue(t)
	}
	return v
}

// byValue masks v if it is a string holding a value the run knows.
func (m *masker) byValue(v any) any {
	if s, ok := v.(string); ok && m.known.String(s) != s {
		return Mask
	}
	return v
}

// renameKeys replaces by their hashed mask the keys of mp under path
// that came from a secret, and the keys that other (the desired side's
// map) lacks and that hold a value the run knows: a key is masked on both
// sides or on neither.
func (m *masker) renameKeys(path []string, mp, other map[string]any) {
	var renamed []string
	for k := range mp {
		_, paired := other[k]
		if m.keys[joinPath(child(path, k))] || !paired && m.known.String(k) != k {
			renamed = append(renamed, k)
		}
	}
	for _, k := range renamed {
		mp[MaskHashed(k)] = mp[k]
		delete(mp, k)
	}
}

// secretPair masks a field that came from a secret, a on the desired side
// and b, if hasB, on the other.
func secretPair(b, a any, hasB bool) (any, any) {
	as, _ := a.(string)
	bs, _ := b.(string)
	switch {
	case object.IsEncrypted(as) || object.IsEncrypted(bs):
		return ciphertextPair(b, a, hasB)
	case !hasB:
		return b, Mask
	case reflect.DeepEqual(a, b):
		return Mask, Mask
	default:
		return MaskHashed(b), MaskChanged(a)
	}
}

// ciphertextPair masks a field of which one side is SOPS ciphertext.
func ciphertextPair(b, a any, hasB bool) (any, any) {
	switch {
	case !hasB:
		return b, Mask
	case reflect.DeepEqual(a, b):
		return Mask, Mask
	default:
		return MaskBefore, MaskAfter
	}
}

// maskSecretData masks the data and stringData values of a Secret key by
// key: a key whose value changed (data decoded and stringData compared
// as one, as the API server merges them) shows the hashed masks, any
// other a plain Mask. SOPS ciphertext (an offline diff) shows as
// ciphertext does. before may be nil (the Secret is new).
func maskSecretData(before, after *unstructured.Unstructured) {
	var old map[string]any
	if before != nil {
		old = secretValues(before)
	}
	now := secretValues(after)
	maskSide := func(u *unstructured.Unstructured, desired bool) {
		for _, field := range []string{"data", "stringData"} {
			vals, ok := u.Object[field].(map[string]any)
			if !ok {
				continue
			}
			for k := range vals {
				prev, hadPrev := old[k]
				next, hasNext := now[k]
				switch {
				case !hadPrev || !hasNext:
					vals[k] = Mask
				case desired:
					_, vals[k] = secretPair(prev, next, true)
				default:
					vals[k], _ = secretPair(prev, next, true)
				}
			}
		}
	}
	maskSide(after, true)
	if before != nil {
		maskSide(before, false)
	}
}

// secretValues merges a Secret's data (decoded) and stringData into one
// key→value map; stringData wins, as the API server lays it over data.
// A data value that is not base64 (or is ciphertext) stays as written.
func secretValues(u *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	data, _ := u.Object["data"].(map[string]any)
	for k, v := range data {
		if s, ok := v.(string); ok && !object.IsEncrypted(s) {
			if plain, err := base64.StdEncoding.DecodeString(s); err == nil {
				v = string(plain)
			}
		}
		out[k] = v
	}
	stringData, _ := u.Object["stringData"].(map[string]any)
	for k, v := range stringData {
		out[k] = v
	}
	return out
}

// secretStrings are the values of a Secret's data (as written, and
// decoded) and stringData; none for nil.
func secretStrings(u *unstructured.Unstructured) []string {
	if u == nil {
		return nil
	}
	var out []string
	for _, field := range []string{"data", "stringData"} {
		vals, _ := u.Object[field].(map[string]any)
		for _, v := range vals {
			s, ok := v.(string)
			if !ok || object.IsEncrypted(s) {
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

// holdsCiphertext reports whether v holds a SOPS ciphertext anywhere.
func holdsCiphertext(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if holdsCiphertext(e) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(t, holdsCiphertext)
	case string:
		return object.IsEncrypted(t)
	}
	return false
}

func child(path []string, step string) []string { return append(slices.Clip(path), step) }

func itoa(i int) string { return strconv.Itoa(i) }
