package decrypt

import (
	"encoding/base64"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

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
