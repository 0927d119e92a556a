package apply

import (
	"strings"

	"github.com/fluxcd/pkg/ssa/utils"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
