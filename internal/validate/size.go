package validate

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// MaxObjectBytes is the largest object, serialised, that the API server
// can store: etcd refuses requests over 1.5 MiB (its default
// --max-request-bytes), and ConfigMaps and Secrets have a 1 MiB data
// limit of their own below that.
const MaxObjectBytes = 1536 << 10

// Sizes refuses objects too large for the API server to store, each named
// with its file, so a run fails right after its build instead of sending
// them. It returns nil or an error joining an *Error per object.
func Sizes(objs []*unstructured.Unstructured, sources map[object.ID]string) error {
	var f Findings
	for _, u := range objs {
		data, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		if len(data) > MaxObjectBytes {
			id := object.IDOf(u)
			f.Errors = append(f.Errors, &Error{Object: id, Source: sources[id], Message: fmt.Sprintf(
				"%s serialised, over the %s the API server can store: split it (a ConfigMap's or Secret's data may not exceed 1 MiB)",
				mib(len(data)), mib(MaxObjectBytes))})
		}
	}
	return f.Err()
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
