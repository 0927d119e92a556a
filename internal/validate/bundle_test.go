package validate

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestBundleHasBuiltInKinds(t *testing.T) {
	t.Parallel()
	b, err := parseBundle(bundleGz)
	if err != nil {
		t.Fatal(err)
	}
	if b.version != KubernetesVersion {
		t.Errorf("bundle is of %s, want %s", b.version, KubernetesVersion)
	}
	for gvk, def := range map[schema.GroupVersionKind]string{
		{Group: "apps", Version: "v1", Kind: "Deployment"}:                               "io.k8s.api.apps.v1.Deployment",
		{Version: "v1", Kind: "ConfigMap"}:                                               "io.k8s.api.core.v1.ConfigMap",
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
		{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}:                     "io.k8s.api.networking.v1.Ingress",
	} {
		if got := b.kinds[gvk]; got != def {
			t.Errorf("%v: got definition %q, want %q", gvk, got, def)
		}
	}
	if _, ok := b.defs[objectMetaDef]; !ok {
		t.Errorf("no %s", objectMetaDef)
	}
}

func TestBundleIsSmall(t *testing.T) {
	t.Parallel()
	const limit = 2 << 20
	if len(bundleGz) > limit {
		t.Errorf("bundle is %d bytes, want at most %d", len(bundleGz), limit)
	}
}

// BenchmarkParseBundle is the one-time cost of the first validation.
func BenchmarkParseBundle(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseBundle(bundleGz); err != nil {
			b.Fatal(err)
		}
	}
}
