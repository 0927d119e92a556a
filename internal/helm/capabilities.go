package helm

import (
	"fmt"
	"slices"

	"github.com/fluxcd/pkg/ssa/utils"
	"helm.sh/helm/v4/pkg/chart/common"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ValidateKubeVersion checks a Kubernetes version templates are to see
// (v1.37.2, 1.37): what --kube-version accepts.
func ValidateKubeVersion(v string) error {
	if v == "" {
		return nil
	}
	if _, err := common.ParseKubeVersion(v); err != nil {
		return fmt.Errorf("want a Kubernetes version such as v1.37.2 or 1.37, got %q", v)
	}
	return nil
}

// OfflineCapabilities are what templates see of a cluster there is none
// of (an offline diff): kubeVersion (empty: Helm's default, as `helm
// template` has it) and, besides Helm's default API versions, those the
// CustomResourceDefinitions among objs define: each served version as
// group/version and group/version/Kind. A configuration's CRDs are what
// its cluster serves once it is deployed, so a chart that branches on
// .Capabilities.APIVersions.Has renders offline as it will on the
// cluster.
func OfflineCapabilities(kubeVersion string, objs []*unstructured.Unstructured) Capabilities {
	caps := Capabilities{KubeVersion: kubeVersion}
	seen := map[string]bool{}
	add := func(v string) {
		if !seen[v] {
			seen[v] = true
			caps.APIVersions = append(caps.APIVersions, v)
		}
	}
	for _, u := range objs {
		if !utils.IsCRD(u) {
			continue
		}
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		for _, v := range versions {
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			name, _ := m["name"].(string)
			if served, ok := m["served"].(bool); name == "" || group == "" || (ok && !served) {
				continue
			}
			add(group + "/" + name)
			if kind != "" {
				add(group + "/" + name + "/" + kind)
			}
		}
	}
	slices.Sort(caps.APIVersions)
	return caps
}
