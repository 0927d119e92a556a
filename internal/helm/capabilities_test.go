package helm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helm"
	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
)

const capsChart = "  chart:\n    spec:\n      chart: caps\n      version: \"0.1.0\"\n      sourceRef: {kind: HelmRepository, name: charts}\n"

const widgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.charts.example.com}
spec:
  group: charts.example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true}
  - {name: v1alpha1, served: false, storage: false}
`

// Without a cluster, templates see the kube-version setting and, besides
// Helm's default API versions, those of the configuration's CRDs: a chart
// branching on .Capabilities renders as it will on the cluster. Without
// either, it sees Helm's defaults, as `helm template` gives.
func TestOfflineCapabilities(t *testing.T) {
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: chartDir("caps"), Version: "0.1.0"})
	crd, _ := objs(t, widgetsCRD)
	for _, tc := range []struct {
		name        string
		kubeVersion string
		crds        []*unstructured.Unstructured
		want        map[string]string
	}{
		{name: "Helm's defaults", want: map[string]string{"widgets": "false", "widgetKind": "false", "clusterIssuers": "false"}},
		{name: "an old Kubernetes", kubeVersion: "1.29", want: map[string]string{"kubeVersion": "v1.29", "api": "legacy", "widgets": "false", "widgetKind": "false", "clusterIssuers": "false"}},
		{name: "a new one and the configuration's CRDs", kubeVersion: "v1.37.2", crds: crd,
			want: map[string]string{"kubeVersion": "v1.37.2", "api": "modern", "widgets": "true", "widgetKind": "true", "clusterIssuers": "false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, sources := objs(t, repository(repo.URL, ""), release(capsChart))
			caps := helm.OfflineCapabilities(tc.kubeVersion, tc.crds)
			out, err := helm.Expand(t.Context(), in, sources, helm.Options{Fetcher: &helm.Fetcher{CacheDir: t.TempDir()}, Capabilities: caps})
			if err != nil {
				t.Fatal(err)
			}
			data, _, _ := unstructured.NestedStringMap(byKind(out.Objects, "ConfigMap").Object, "data")
			if tc.want["kubeVersion"] == "" {
				// Helm's, which depends on the build (v1.20 in tests).
				delete(data, "kubeVersion")
				delete(data, "api")
			}
			if diff := cmp.Diff(tc.want, data); diff != "" {
				t.Errorf("the ConfigMap's data (-want +got):\n%s", diff)
			}
		})
	}
	if got := helm.OfflineCapabilities("", crd).APIVersions; !cmp.Equal(got, []string{"charts.example.com/v1", "charts.example.com/v1/Widget"}) {
		t.Errorf("API versions of a CRD with an unserved version: %q", got)
	}
	for v, ok := range map[string]bool{"": true, "v1.37.2": true, "1.30": true, "v1.33.4-gke.1245000": true, "latest": false, "1": false} {
		if err := helm.ValidateKubeVersion(v); (err == nil) != ok {
			t.Errorf("ValidateKubeVersion(%q): %v", v, err)
		}
	}
}
