package apply

import (
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/ssa/utils"
	"github.com/pmezard/go-difflib/difflib"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// buildIndex knows which Namespaces and CRD-defined kinds a build creates.
type buildIndex struct {
	namespaces map[string]bool
	kinds      map[string]bool // group/kind
}

func newBuildIndex(objs []*unstructured.Unstructured) buildIndex {
	ix := buildIndex{namespaces: map[string]bool{}, kinds: map[string]bool{}}
	for _, u := range objs {
		switch {
		case utils.IsNamespace(u):
			ix.namespaces[u.GetName()] = true
		case utils.IsCRD(u):
			ix.kinds[crdKind(u)] = true
		}
	}
	return ix
}

// createsPrerequisite reports whether err only says that u's Namespace or
// kind does not exist yet while the build creates it.
func (ix buildIndex) createsPrerequisite(u *unstructured.Unstructured, err error) bool {
	gvk := u.GroupVersionKind()
	if ix.kinds[gvk.Group+"/"+gvk.Kind] && (meta.IsNoMatchError(err) || strings.Contains(err.Error(), "no matches for kind")) {
		return true
	}
	return ix.namespaces[u.GetNamespace()] && apierrors.IsNotFound(err)
}

// UnifiedDiff renders a unified diff of two objects as YAML, after removing
// server-managed noise and masking Secret values, SOPS ciphertext and the
// fields holding secrets (in any kind of object). A nil before is
// creation.
func UnifiedDiff(id object.ID, before, after *unstructured.Unstructured, secrets []string) string {
	return UnifiedDiffBetween("live", "desired", id, before, after, secrets)
}

// UnifiedDiffBetween is UnifiedDiff with the sides named from and to,
// e.g. "base" and "head" for two renders of Git. A nil after is deletion.
func UnifiedDiffBetween(from, to string, id object.ID, before, after *unstructured.Unstructured, secrets []string) string {
	var a, b string
	switch {
	case after == nil:
		_, gone := maskedPair(nil, before, secrets)
		a = toYAML(gone)
	case before == nil:
		_, made := maskedPair(nil, after, secrets)
		b = toYAML(made)
	default:
		before, after = maskedPair(before, after, secrets)
		a, b = toYAML(before), toYAML(after)
	}
	text, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        lines(a),
		B:        lines(b),
		FromFile: id.String() + " (" + from + ")",
		ToFile:   id.String() + " (" + to + ")",
		Context:  3,
	})
	return text
}

// lines splits text into lines; none for no text, not one empty line.
func lines(text string) []string {
	if text == "" {
		return nil
	}
	return difflib.SplitLines(text)
}

// maskedPair is before and after (nil before: after is new) without
// server-managed noise, with Secret values, SOPS ciphertext and the
// fields holding secrets masked, as diffs show them.
func maskedPair(before, after *unstructured.Unstructured, secrets []string) (*unstructured.Unstructured, *unstructured.Unstructured) {
	if utils.IsSecret(after) {
		// A Secret's values may also sit in its other fields: kubectl's
		// last-applied annotation holds them all.
		secrets = append(append(secretStrings(before), secretStrings(after)...), secrets...)
	}
	after = clean(after)
	if before != nil {
		before = clean(before)
	}
	maskSecrets(before, after)
	maskEncrypted(before, after)
	maskSecretFields(before, after, secrets)
	return before, after
}

func clean(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	for _, f := range [][]string{
		{"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "uid"},
		{"metadata", "generation"}, {"metadata", "creationTimestamp"}, {"status"},
	} {
		unstructured.RemoveNestedField(u.Object, f...)
	}
	return u
}

func toYAML(u *unstructured.Unstructured) string {
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		return fmt.Sprintf("# cannot render: %v\n", err)
	}
	return string(data)
}
