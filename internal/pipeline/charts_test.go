package pipeline

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kustomize-deploy/kustomize-deploy/internal/build"
	"github.com/kustomize-deploy/kustomize-deploy/internal/object"
)

// A HelmRelease field the tool does not know refuses the unit at the
// release's file and line, before any chart is fetched; every release's
// problem is reported.
func TestCheckReleasesRefusesAtTheReleasesLine(t *testing.T) {
	release := func(name, extra string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		doc := "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: " + name + ", namespace: apps}\nspec:\n  chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: charts}}}\n" + extra
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	good, bad, worse := release("good", ""), release("bad", "  vaules: {}\n"), release("worse", "  kubeConfig: {secretRef: {name: remote}}\n")
	sources := map[object.ID]string{object.IDOf(good): "apps/web.yaml", object.IDOf(bad): "apps/web.yaml", object.IDOf(worse): ""}
	lines := func(file string, id object.ID) int {
		return map[string]int{"good": 1, "bad": 9}[id.Name]
	}
	err := checkReleases([]*unstructured.Unstructured{good, bad, worse}, sources, lines)
	if err == nil {
		t.Fatal("no error")
	}
	fes := build.FileErrors(err)
	if len(fes) != 1 || fes[0].File != "apps/web.yaml" || fes[0].Line != 9 ||
		fes[0].Error() != "HelmRelease apps/bad (apps/web.yaml:9): spec: vaules is not a HelmRelease field this tool knows" {
		t.Errorf("file errors %+v", fes)
	}
	if !strings.Contains(err.Error(), "HelmRelease apps/worse: spec.kubeConfig: not supported yet") {
		t.Errorf("error %v", err)
	}
	if err := checkReleases([]*unstructured.Unstructured{good}, sources, lines); err != nil {
		t.Errorf("a good release: %v", err)
	}
}
