package validate

import (
	"encoding/base64"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// SecretData refuses Secrets whose data values are not base64, each named
// with its file and key as Client names them: the API server's dry-run
// names neither the key nor the field ("illegal base64 data at input byte
// 3"). Values are never quoted. It returns nil or an error joining an
// *Error per value.
func SecretData(objs []*unstructured.Unstructured, sources map[object.ID]string) error {
	var f Findings
	for _, u := range objs {
		if u.GetAPIVersion() != "v1" || u.GetKind() != "Secret" {
			continue
		}
		data, _ := u.Object["data"].(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(data)) {
			s, ok := data[key].(string)
			if !ok {
				continue // not a string: the dry-run says what it is
			}
			if _, err := base64.StdEncoding.DecodeString(s); err != nil {
				id := object.IDOf(u)
				f.Errors = append(f.Errors, &Error{Object: id, Source: sources[id], Field: "data." + key, Message: "invalid base64 (format byte)"})
			}
		}
	}
	return f.Err()
}
