package decrypt

import (
	"encoding/base64"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// EncryptedFields lists the fields of u that DecryptObjects will decrypt:
// in a SOPS-encrypted manifest (one with sops metadata), every value
// that is ciphertext. sops keeps a document's shape, so after decryption
// the same paths hold the plaintext, of whatever type sops recorded.
// Call it before DecryptObjects; nil when u is not encrypted.
func EncryptedFields(u *unstructured.Unstructured) []object.FieldPath {
	if u == nil {
		return nil
	}
	if _, ok := u.Object["sops"]; !ok {
		return nil
	}
	var out []object.FieldPath
	var walk func(path object.FieldPath, v any)
	walk = func(path object.FieldPath, v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(t) {
				if len(path) == 0 && k == "sops" {
					continue
				}
				walk(path.Child(k), t[k])
			}
		case []any:
			for i, e := range t {
				walk(path.Child(strconv.Itoa(i)), e)
			}
		case string:
			if object.IsEncrypted(t) {
				out = append(out, path)
			}
		}
	}
	walk(nil, u.Object)
	return out
}

// SecretValues returns every value held by the Secrets among objs, for the
// caller to register with ::add-mask:: and to mask in diffs: each data value
// both as written (base64) and decoded, and each stringData value. Empty
// strings are skipped and duplicates removed. The order is deterministic:
// longest first, so a masker replacing them in turn never leaves part of a
// longer secret behind after replacing a shorter one inside it; then
// lexicographic.
func SecretValues(objs []*unstructured.Unstructured) []string {
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" {
			seen[s] = true
		}
	}
	for _, u := range objs {
		if u == nil || !isSecret(u.Object) {
			continue
		}
		data, _ := u.Object["data"].(map[string]interface{})
		for _, v := range data {
			s, ok := v.(string)
			if !ok {
				continue
			}
			add(s)
			if raw, err := base64.StdEncoding.DecodeString(s); err == nil {
				add(string(raw))
			}
		}
		stringData, _ := u.Object["stringData"].(map[string]interface{})
		for _, v := range stringData {
			if s, ok := v.(string); ok {
				add(s)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}
