package diff

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// Noise says which fields' changes a review folds: a change that touches
// nothing else is counted, not shown (its diff is kept). Always folded:
// Helm's helm.sh/chart and the app.kubernetes.io/version labels, and
// checksum/* annotations, at every metadata of an object (its own, a pod
// template's). Pointers add JSON pointers (RFC 6901), where a segment "*"
// matches any key or index and a segment ending in "*" any key it starts.
type Noise struct {
	Pointers []string
}

// ValidatePointer checks p is a JSON pointer to a field (not the root).
func ValidatePointer(p string) error {
	tokens, ok := object.PointerTokens(p)
	switch {
	case !ok:
		return fmt.Errorf("%q is not a JSON pointer: it starts with /, e.g. /metadata/labels/example.com~1build", p)
	case len(tokens) == 0 || len(tokens) == 1 && tokens[0] == "":
		return fmt.Errorf("%q folds the whole object: name a field, e.g. /metadata/annotations/example.com~1build", p)
	}
	return nil
}

// Only reports whether old and now differ in folded fields alone: both
// exist, they differ, and they are equal once those fields are removed.
func (n Noise) Only(old, now *unstructured.Unstructured) bool {
	if old == nil || now == nil || reflect.DeepEqual(old.Object, now.Object) {
		return false
	}
	a, b := old.DeepCopy().Object, now.DeepCopy().Object
	for _, m := range []map[string]any{a, b} {
		stripMetadata(m)
		for _, p := range n.Pointers {
			if tokens, ok := object.PointerTokens(p); ok {
				removePointer(m, tokens)
			}
		}
	}
	return reflect.DeepEqual(a, b)
}

// stripMetadata removes the default noise from every "metadata" map in v.
func stripMetadata(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if md, ok := e.(map[string]any); ok && k == "metadata" {
				if labels, ok := md["labels"].(map[string]any); ok {
					delete(labels, "helm.sh/chart")
					delete(labels, "app.kubernetes.io/version")
				}
				if ann, ok := md["annotations"].(map[string]any); ok {
					for key := range ann {
						if strings.HasPrefix(key, "checksum/") {
							delete(ann, key)
						}
					}
				}
			}
			stripMetadata(e)
		}
	case []any:
		for _, e := range t {
			stripMetadata(e)
		}
	}
}

// removePointer removes what segs (a pointer's tokens) points to in v,
// wildcards expanded (object.PointerRemove takes no wildcard).
func removePointer(v any, segs []string) {
	if len(segs) == 0 {
		return
	}
	seg, last := segs[0], len(segs) == 1
	match := func(key string) bool {
		switch {
		case seg == "*":
			return true
		case strings.HasSuffix(seg, "*"):
			return strings.HasPrefix(key, strings.TrimSuffix(seg, "*"))
		}
		return key == seg
	}
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if !match(k) {
				continue
			}
			if last {
				delete(t, k)
			} else {
				removePointer(e, segs[1:])
			}
		}
	case []any:
		for i, e := range t {
			if !match(strconv.Itoa(i)) {
				continue
			}
			if last {
				t[i] = nil // keeps the other indexes where they are
			} else {
				removePointer(e, segs[1:])
			}
		}
	}
}
