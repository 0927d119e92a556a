package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kustomize-deploy/kustomize-deploy/internal/helmtest"
)

// crdChart writes a chart named things into dir: a CRD of group in
// crds/ whose spec has the given properties, and a ConfigMap template
// (no custom resource, so the chart renders with its CRD left out).
func crdChart(t *testing.T, dir, group string, properties ...string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "Chart.yaml"), "apiVersion: v2\nname: things\nversion: 0.1.0\n")
	writeFile(t, filepath.Join(dir, "values.yaml"), "size: small\n")
	writeFile(t, filepath.Join(dir, "templates", "configmap.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  size: {{ .Values.size | quote }}\n")
	props := ""
	for _, p := range properties {
		props += "              " + p + ": {type: string}\n"
	}
	writeFile(t, filepath.Join(dir, "crds", "things.yaml"), `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.`+group+`
spec:
  group: `+group+`
  names: {kind: Thing, listKind: ThingList, plural: things, singular: thing}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
`+props)
}

// The three install.crds and upgrade.crds policies on the cluster, with a chart carrying
// a CRD in crds/: Skip leaves the CRD out; Create creates it when it is
// missing and never changes it, not even when a chart bump changes it;
// CreateReplace applies the chart's CRD over it. A chart's CRD is never
// deleted, as Helm never deletes one: neither when the policy becomes
// Skip nor when the HelmRelease leaves Git.
func TestHelmReleaseCRDPolicies(t *testing.T) {
	c := newCLI(t)
	group := c.ns + ".example.com"
	crdName := "things." + group
	v1, v2 := t.TempDir(), t.TempDir()
	crdChart(t, v1, group, "size")
	crdChart(t, v2, group, "size", "color")
	repo := helmtest.NewRepository(t, helmtest.Chart{Dir: v1, Version: "0.1.0"}, helmtest.Chart{Dir: v2, Version: "0.2.0"})
	crds := dynamic.NewForConfigOrDie(cluster.Config).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crdName, metav1.DeleteOptions{}) })
	// properties is the live CRD's spec properties, nil when it is not there.
	properties := func() []string {
		t.Helper()
		crd, err := crds.Get(t.Context(), crdName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		props, _, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties")
		var out []string
		for p := range props {
			out = append(out, p)
		}
		slices.Sort(out)
		return out
	}
	dir := t.TempDir()
	args := []string{"--name", "things", "--path", dir, "--chart-cache", t.TempDir()}
	writeFile(t, filepath.Join(dir, "repository.yaml"), "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: "+c.ns+"\nspec:\n  url: "+repo.URL+"\n")
	// deployWith applies the chart at version with install.crds install
	// and, unless it is "", upgrade.crds upgrade.
	deployWith := func(version, install, upgrade string) map[string]string {
		t.Helper()
		policies := "  install:\n    crds: " + install + "\n"
		if upgrade != "" {
			policies += "  upgrade:\n    crds: " + upgrade + "\n"
		}
		writeFile(t, filepath.Join(dir, "release.yaml"), "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: things\n  namespace: "+c.ns+
			"\nspec:\n  interval: 10m\n  chart:\n    spec:\n      chart: things\n      version: \""+version+"\"\n      sourceRef: {kind: HelmRepository, name: charts}\n"+policies)
		o, r := c.apply(args...)
		if o.code != exitOK {
			t.Fatalf("chart %s with crds %s/%s: exit %d, %s %s\n%s", version, install, upgrade, o.code, r.Reason, r.Message, o.stderr)
		}
		got := map[string]string{}
		for _, e := range r.Entries {
			got[e.Object.Kind] = string(e.Action)
		}
		return got
	}
	// deploy sets both policies: once installed, a release's CRDs follow
	// upgrade.crds.
	deploy := func(version, policy string) map[string]string {
		t.Helper()
		return deployWith(version, policy, policy)
	}

	if got := deploy("0.1.0", "Skip"); got["CustomResourceDefinition"] != "" || got["ConfigMap"] != "created" {
		t.Errorf("Skip: entries %v", got)
	}
	if p := properties(); p != nil {
		t.Fatalf("Skip created the chart's CRD: %v", p)
	}

	if got := deploy("0.1.0", "Create"); got["CustomResourceDefinition"] != "created" {
		t.Errorf("Create: entries %v", got)
	}
	if p := strings.Join(properties(), ","); p != "size" {
		t.Fatalf("Create: the CRD's properties %q, want size", p)
	}
	deploy("0.2.0", "Create")
	if p := strings.Join(properties(), ","); p != "size" {
		t.Errorf("Create changed the CRD on a chart bump: properties %q, want size", p)
	}

	if got := deploy("0.2.0", "CreateReplace"); got["CustomResourceDefinition"] != "configured" {
		t.Errorf("CreateReplace: entries %v", got)
	}
	if p := strings.Join(properties(), ","); p != "color,size" {
		t.Errorf("CreateReplace: the CRD's properties %q, want color,size", p)
	}

	// upgrade.crds defaults to Skip, as in Flux: an installed release's
	// CRD is left as it is, whatever install.crds says.
	deployWith("0.1.0", "CreateReplace", "")
	if p := strings.Join(properties(), ","); p != "color,size" {
		t.Errorf("an upgrade without upgrade.crds changed the CRD: properties %q, want color,size", p)
	}

	// The HelmRelease leaves Git: its objects go, its chart's CRD stays.
	if err := os.Remove(filepath.Join(dir, "release.yaml")); err != nil {
		t.Fatal(err)
	}
	if o, r := c.apply(args...); o.code != exitOK || r.Counts.Deleted != 1 {
		t.Fatalf("apply without the HelmRelease: exit %d, counts %+v\n%s", o.code, r.Counts, o.stderr)
	}
	if properties() == nil {
		t.Fatal("the chart's CRD was deleted with its HelmRelease")
	}
	// The policy becomes Skip: the CRD the unit applied stays.
	if got := deploy("0.2.0", "CreateReplace"); got["CustomResourceDefinition"] != "unchanged" {
		t.Errorf("CreateReplace again: entries %v", got)
	}
	if got := deploy("0.2.0", "Skip"); got["CustomResourceDefinition"] != "skipped" {
		t.Errorf("Skip after CreateReplace: entries %v", got)
	}
	if properties() == nil {
		t.Fatal("the chart's CRD was deleted when its policy became Skip")
	}
}
