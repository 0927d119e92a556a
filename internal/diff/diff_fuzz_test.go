package diff

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// FuzzUnifiedDiff diffs any live object against any desired one of the
// same identity, with a secret that was substituted or decrypted into it:
// every field and key of the desired object holding it is recorded as
// from a secret, as rendering records them, and the run knows the value.
// Whatever the objects hold, the diff shows none of the secret, of a
// Secret's data or stringData values, or of SOPS ciphertext, on either
// side (see leaks for what "shows" means).
func FuzzUnifiedDiff(f *testing.F) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: shop\n"
	sec := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\n  namespace: shop\n"
	lastApplied := "  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{\"stringData\":{\"password\":\"hunter22\"}}'\n"
	for _, seed := range [][3]string{
		// A secret substituted into a ConfigMap, changed.
		{cm + "data:\n  url: postgres://app:old-pass@db/app\n", cm + "data:\n  url: postgres://app:hunter22@db/app\n", "hunter22"},
		// A new object.
		{"", cm + "data:\n  token: hunter22\n", "hunter22"},
		// The secret moves to another key: the live side shows the old key.
		{cm + "data:\n  OLD_PASSWORD: hunter22\n", cm + "data:\n  PASSWORD: hunter22\n", "hunter22"},
		// A list that shrinks: the live side has an item the desired lacks.
		{cm + "list:\n- a\n- hunter22\n", cm + "list:\n- hunter22\n", "hunter22"},
		// A value that changes type.
		{cm + "data:\n  x:\n    y: hunter22\n", cm + "data:\n  x: plain\n", "hunter22"},
		// A Secret taken over from kubectl: its values sit in an annotation.
		{sec + lastApplied + "  labels: {a: b}\nstringData:\n  password: hunter22\n", sec + lastApplied + "  labels: {a: c}\nstringData:\n  password: hunter22\n", ""},
		{sec + "data:\n  password: aHVudGVyMjI=\n  same: c2FtZS12YWx1ZQ==\n", sec + "data:\n  password: bmV3LXBhc3M=\n  same: c2FtZS12YWx1ZQ==\n", ""},
		// SOPS ciphertext left in an offline diff.
		{cm + "data:\n  k: " + enc("b2xk") + "\n", cm + "data:\n  k: " + enc("bmV3") + "\n  gone: " + enc("Z29uZQ==") + "\n", ""},
		{cm + "spec:\n  nested:\n  - " + enc("YQ==") + "\n", cm + "spec:\n  nested: " + enc("Yg==") + "\n", "ENC["},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}

	f.Fuzz(func(t *testing.T, live, desired, secret string) {
		after := parse(desired)
		if after == nil {
			return
		}
		before := parse(live)
		if before != nil { // the live object has the desired one's identity
			before.SetAPIVersion(after.GetAPIVersion())
			before.SetKind(after.GetKind())
			before.SetName(after.GetName())
			before.SetNamespace(after.GetNamespace())
		}
		id := object.IDOf(after)
		var b *unstructured.Unstructured
		if before != nil {
			b = before.DeepCopy()
		}
		out := Unified(id, b, after.DeepCopy(), Secrets{Fields: holding(after.Object, secret), Values: []string{secret}})

		needles := []string{secret}
		for _, u := range []*unstructured.Unstructured{before, after} {
			if u == nil {
				continue
			}
			if utils.IsSecret(after) {
				for _, field := range []string{"data", "stringData"} {
					m, _, _ := unstructured.NestedMap(u.Object, field)
					for _, v := range m {
						if s, ok := v.(string); ok {
							needles = append(needles, s)
						}
					}
				}
			}
			walkScalars(u.Object, func(v any) {
				if s, ok := v.(string); ok && object.IsEncrypted(s) {
					needles = append(needles, s)
				}
			})
		}
		for _, n := range needles {
			if leaks(out, n, before, after) {
				t.Fatalf("the diff shows %q:\n%s", n, out)
			}
		}
	})
}

func parse(s string) *unstructured.Unstructured {
	var m map[string]any
	if s == "" || yaml.Unmarshal([]byte(s), &m) != nil || m == nil {
		return nil
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" || u.GetName() == "" {
		return nil
	}
	return u
}

// holding records, as rendering would, the fields and keys of obj that
// hold secret.
func holding(obj map[string]any, secret string) *object.SecretFields {
	out := &object.SecretFields{}
	if secret == "" {
		return out
	}
	var walk func(path object.FieldPath, v any)
	walk = func(path object.FieldPath, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				if strings.Contains(k, secret) {
					out.AddKey(path.Child(k))
				}
				walk(path.Child(k), e)
			}
		case []any:
			for i, e := range t {
				walk(path.Child(strconv.Itoa(i)), e)
			}
		case string:
			if strings.Contains(t, secret) {
				out.AddField(path)
			}
		}
	}
	walk(nil, obj)
	return out
}

// minKnown is the shortest value looked for by value (mask's minimum).
const minKnown = 4

// masks are the texts of masks, which may render a needle's characters.
var masks = regexp.MustCompile(`\*\*\* \((changed, )?sha256:[0-9a-f]{8}\)|\*\*\* \((before|after)\)`)

// leaks reports whether the body of diff (its header names the object)
// shows needle. A needle too short to look for by value shows where Git
// did not put it (the live side); one with blanks, quotes or backslashes
// may be rendered split or escaped, and is not looked for. A needle may
// still show where something other than a value holding it renders the
// same characters: at a line's start before a key, in the masks, or in
// the YAML rendering of a value that does not hold it.
func leaks(diff, needle string, objs ...*unstructured.Unstructured) bool {
	if len(strings.TrimSpace(needle)) < minKnown || strings.ContainsAny(needle, " \t\n\r'\"\\") {
		return false
	}
	benign := false
	for _, u := range objs {
		if u == nil {
			continue
		}
		walkKeys(u.Object, func(k string) {
			r := render(k)
			benign = benign || !strings.Contains(r, needle) && (strings.Contains("+"+r+":", needle) || strings.Contains("-"+r+":", needle))
		})
		walkScalars(u.Object, func(v any) {
			if s, ok := v.(string); !ok || !strings.Contains(s, needle) {
				benign = benign || strings.Contains(render(v), needle)
			}
		})
	}
	if benign {
		return false
	}
	for i, line := range strings.Split(diff, "\n") {
		if i < 2 || hunk.MatchString(line) { // the header names the object
			continue
		}
		if strings.Contains(masks.ReplaceAllString(line, "***"), needle) {
			return true
		}
	}
	return false
}

var hunk = regexp.MustCompile(`^@@ -[0-9,]+ \+[0-9,]+ @@$`)

// render is v as the diff's YAML renders a value (or a key).
func render(v any) string {
	data, err := yaml.Marshal(map[string]any{"k": v})
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(string(data), "k:"))
}

func walkScalars(v any, fn func(any)) {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			walkScalars(e, fn)
		}
	case []any:
		for _, e := range t {
			walkScalars(e, fn)
		}
	default:
		fn(v)
	}
}

func walkKeys(v any, fn func(string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			fn(k)
			walkKeys(e, fn)
		}
	case []any:
		for _, e := range t {
			walkKeys(e, fn)
		}
	}
}
