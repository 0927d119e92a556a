package object

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// digestRecipe changes whenever what a digest stands for changes (say, how
// objects are applied), so digests recorded by an older version never
// match and every object is checked once more.
const digestRecipe = "kustomize-deploy/v1\n"

// Digest is a hash of the manifest u as it is sent to the cluster. Two
// objects with the same content have the same digest whatever the order of
// their fields (encoding/json sorts map keys).
func Digest(u *unstructured.Unstructured) string {
	h := sha256.New()
	h.Write([]byte(digestRecipe))
	// Marshalling a decoded manifest cannot fail; an error would only come
	// from a value JSON cannot hold, and then no digest matches.
	if err := json.NewEncoder(h).Encode(u.Object); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
