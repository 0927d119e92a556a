package resourceset

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// CopyFromAnnotation, on a ConfigMap or Secret a ResourceSet generates,
// names the object of the cluster ("namespace/name", same kind) whose
// data the operator copies into it as it applies it.
const CopyFromAnnotation = Group + "/copyFrom"

// copyFrom copies into g, a ConfigMap or Secret that id generates with
// the copyFrom annotation, the data of the object of the cluster it
// names, as the operator does when it applies g: a ConfigMap gets its
// data and binaryData, a Secret its data as stringData (and its type,
// unless g has one). Objects of other kinds are left as they are, as the
// operator leaves them. Without a cluster (Options.Lookup nil: an
// offline rendering) g stays as generated, with a note; a source that
// does not exist fails the ResourceSet, as it fails the operator's
// reconciliation.
func (x *expander) copyFrom(ctx context.Context, id object.ID, g *unstructured.Unstructured, e *expanded) error {
	from, ok := g.GetAnnotations()[CopyFromAnnotation]
	kind := g.GetKind()
	if !ok || g.GetAPIVersion() != "v1" || (kind != "ConfigMap" && kind != "Secret") {
		return nil
	}
	gid := object.IDOf(g)
	parts := strings.Split(from, "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return x.fail(id, nil, fmt.Errorf("generates %s with the annotation %s %q: not namespace/name", gid, CopyFromAnnotation, from))
	}
	if x.opts.Lookup == nil {
		e.notes = append(e.notes, fmt.Sprintf("%s: %s copies the data of %s/%s from the cluster when applied; without a cluster it is shown as generated", id, gid, kind, from))
		return nil
	}
	src, err := x.opts.Lookup(ctx, "v1", kind, parts[0], parts[1])
	if err != nil {
		return x.fail(id, nil, fmt.Errorf("generates %s, which copies from %s/%s: %w", gid, kind, from, err))
	}
	if len(src) == 0 {
		return x.fail(id, nil, fmt.Errorf("generates %s, which copies from %s/%s: it is not in the cluster", gid, kind, from))
	}
	switch kind {
	case "ConfigMap":
		data, _, _ := unstructured.NestedStringMap(src, "data")
		if err := unstructured.SetNestedStringMap(g.Object, data, "data"); err != nil {
			return x.fail(id, nil, fmt.Errorf("generates %s: copying the data of ConfigMap/%s: %w", gid, from, err))
		}
		if bin, _, _ := unstructured.NestedStringMap(src, "binaryData"); len(bin) > 0 {
			if err := unstructured.SetNestedStringMap(g.Object, bin, "binaryData"); err != nil {
				return x.fail(id, nil, fmt.Errorf("generates %s: copying the binaryData of ConfigMap/%s: %w", gid, from, err))
			}
		}
	case "Secret":
		if _, has, _ := unstructured.NestedString(g.Object, "type"); !has {
			typ, _, _ := unstructured.NestedString(src, "type")
			if typ == "" {
				typ = "Opaque"
			}
			g.Object["type"] = typ
		}
		encoded, _, _ := unstructured.NestedStringMap(src, "data")
		data := make(map[string]string, len(encoded))
		for k, v := range encoded {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return x.fail(id, nil, fmt.Errorf("generates %s: Secret/%s data[%q] is not base64", gid, from, k))
			}
			data[k] = string(b)
		}
		if err := unstructured.SetNestedStringMap(g.Object, data, "stringData"); err != nil {
			return x.fail(id, nil, fmt.Errorf("generates %s: copying the data of Secret/%s: %w", gid, from, err))
		}
	}
	return nil
}
